"""Text helpers shared by the scorers: answer extraction and normalisation, written once."""
