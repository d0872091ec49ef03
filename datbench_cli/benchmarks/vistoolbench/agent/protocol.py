"""The official VisualToolBench tool protocol, stated in this project's own words.

What is taken from the official runner (``scripts/model_inference.py``, ``tools.py`` and
``prompt.py`` of ``xi1ngang/VisualToolBench`` at ``d4f200a``) is the behaviour, not the text:
the three system prompt levels (their content, reworded), the six tool names with their
parameters, the round budget and the literal answered when it runs out, the JPEG q85 image
transport, and the temperature rule. Tool descriptions and prompts are paraphrased (the spec
forbids copying prompt text), which is the one unavoidable difference in what the model reads.
"""

from __future__ import annotations

from typing import Any

# The environment variables the web tools read their keys from, unless told otherwise.
DEFAULT_SERP_KEY_ENV = "SERP_API_KEY"
DEFAULT_WEATHER_KEY_ENV = "OPENWEATHER_API_KEY"

DEFAULT_MAX_TOOL_ROUNDS = 20
# The answer of a turn whose every allowed round asked for tools (judged like any answer).
MAX_ROUNDS_ANSWER = "Model hit the maximum number of tool calls"
DEFAULT_SYSTEM_PROMPT = "high"

SYSTEM_PROMPTS: dict[str, str | None] = {
    "low": (
        "You are a helpful assistant for visual reasoning. You have tools that can help you "
        "answer the user's question."
    ),
    "mid": (
        "You are a helpful assistant for visual reasoning. You have tools that can help you "
        "answer the user's question.\n"
        "1. Process the image with the image-processing tool when that makes it easier to "
        "understand.\n"
        "2. When you use the image-processing tool, always save the transformed image so it "
        "can be referred to later.\n"
        "3. Use the other, general-purpose tools to look up what you need for the answer."
    ),
    "high": (
        "You are a visual-reasoning assistant who uses tools proactively.\n"
        "When the user gives you an image and asks for something that depends on visual "
        "details that are small, unclear or away from the centre, you must:\n"
        "1. Look at the image closely and note which visual clues are most likely to lead you "
        "to the relevant object.\n"
        "2. Use the image-processing tool on your own initiative (crop, zoom, enhance) to "
        "isolate and sharpen that region.\n"
        "3. Save every transformed image: it is added to the conversation for you to see.\n"
        "4. Repeat as often as needed, calling the tools until the visual evidence is clear "
        "enough to answer.\n"
        "5. Check your observations: make sure the last transformed image supports an "
        "accurate, confident answer before you reply.\n"
        "6. Use the other, general-purpose tools when the answer needs them.\n"
        "7. Your number of tool calls is limited, so use the tools wisely."
    ),
    # Quirk: the official command line offers "medium", which names no prompt in its table,
    # so such runs had no system prompt at all.
    "medium": None,
    "none": None,
}

IMAGE_TOOL = "python_image_processing"
INTERPRETER_TOOL = "python_interpreter"
CALCULATOR_TOOL = "calculator"
SEARCH_TOOL = "google_search"
PAGE_TOOL = "browser_get_page_text"
WEATHER_TOOL = "historical_weather"
OFFICIAL_TOOLS = (
    IMAGE_TOOL,
    INTERPRETER_TOOL,
    SEARCH_TOOL,
    PAGE_TOOL,
    WEATHER_TOOL,
    CALCULATOR_TOOL,
)
CODE_TOOLS = (IMAGE_TOOL, INTERPRETER_TOOL)
WEB_TOOLS = (SEARCH_TOOL, PAGE_TOOL, WEATHER_TOOL)

# Names put into the code's namespace, as the official tools do: (name, module[:attribute],
# load lazily). Packages that are not installed are left out (the run records which are there).
IMAGE_PRELOAD = (("Image", "PIL.Image", False), ("np", "numpy", False), ("cv2", "cv2", True))
INTERPRETER_PRELOAD = (
    ("np", "numpy", False),
    ("pandas", "pandas", True),
    ("pd", "pandas", True),
    ("scipy", "scipy.stats", True),
    ("sklearn", "sklearn", True),
    ("simpy", "simpy", True),
    ("tabulate", "tabulate:tabulate", False),
    ("BeautifulSoup", "bs4:BeautifulSoup", False),
    ("Image", "PIL.Image", False),
)

# Saved images the image tool returns to the model (the official file-name pattern).
TRANSFORMED_NAME = r"^transformed_image_(\d+)\.png$"


def transformed_images_text(call_id: str) -> str:
    """The text of the user message carrying the images saved by tool call ``call_id``."""
    return f"These are the images produced by tool call {call_id}."


def temperature_for(model: str) -> float:
    """The official rule: 1.0 for reasoning models, else 0.0.

    Quirk: decided by substring match on the model name, as officially (so any name that
    contains e.g. ``o3`` or ``gpt-5`` gets 1.0); ``-thinking`` names get 1.0 too.
    """
    reasoning = ("o3", "o1", "o1-pro", "o4-mini", "gpt-5", "gpt-5-mini")
    if "thinking" in model or any(name in model for name in reasoning):
        return 1.0
    return 0.0


def _code_parameters() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "code": {
                "type": "string",
                "description": "The Python code to run.",
                "minLength": 1,
                "maxLength": 5000,
            }
        },
        "required": ["code"],
    }


def _function(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


def tool_schemas(
    available: tuple[str, ...], image_files: list[str], packages: list[str]
) -> list[dict[str, Any]]:
    """The tool list of one request, in the official order, for the ``available`` tools.

    ``image_files``: the working directory's images (the turn's, then every one saved so far),
    listed in the image tool's description as officially; ``packages``: what the interpreter
    can import among the officially pre-installed ones.
    """
    schemas = {
        IMAGE_TOOL: _function(
            IMAGE_TOOL,
            "Write Python code that processes an image and saves the result as a PNG.\n"
            f"- Read one source image of your choice from the working directory: {image_files}.\n"
            "- Process it with PIL, NumPy or OpenCV as you like; matplotlib cannot display "
            "images.\n"
            "- You must save the transformed image as PNG in the working directory under the "
            'name "transformed_image_i.png", where i starts at 0 and goes up by one with '
            "every call, so no file is overwritten. For example:\n"
            '    img.save(f"./transformed_image_{i}.png", "PNG")\n',
            _code_parameters(),
        ),
        INTERPRETER_TOOL: _function(
            INTERPRETER_TOOL,
            "A general Python interpreter: runs the code and returns what it prints with "
            "print(); exceptions are returned in stderr.\n\nAvailable packages:\n"
            + "\n".join(f"  - {name}" for name in packages),
            _code_parameters(),
        ),
        SEARCH_TOOL: _function(
            SEARCH_TOOL,
            "Search Google and return the most relevant results; useful for current "
            "information, news or facts.",
            {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What to search for"},
                    "num_results": {
                        "type": "integer",
                        "description": "How many results to return (1-10)",
                        "default": 5,
                    },
                },
                "required": ["query"],
            },
        ),
        PAGE_TOOL: _function(
            PAGE_TOOL,
            "Fetch a web page and return its text; useful for reading articles, documentation "
            "or any other page.",
            {
                "type": "object",
                "properties": {"url": {"type": "string", "description": "The page's URL"}},
                "required": ["url"],
            },
        ),
        WEATHER_TOOL: _function(
            WEATHER_TOOL,
            "Weather data for a place and a date; useful for questions about past weather.",
            {
                "type": "object",
                "properties": {
                    "location": {
                        "type": "string",
                        "description": "A city name or coordinates, e.g. 'Paris, France' or "
                        "'48.8566,2.3522'",
                    },
                    "date": {"type": "string", "description": "The date, as YYYY-MM-DD"},
                },
                "required": ["location", "date"],
            },
        ),
        CALCULATOR_TOOL: _function(
            CALCULATOR_TOOL,
            "A calculator for arithmetic: +, -, *, /, %, ** (powers), sqrt, sin, cos, tan, "
            "log, exp and parentheses.",
            {
                "type": "object",
                "properties": {
                    "expression": {
                        "type": "string",
                        "description": 'The expression to evaluate, e.g. "2 * 3.14 * 5".',
                    }
                },
                "required": ["expression"],
            },
        ),
    }
    return [schemas[name] for name in OFFICIAL_TOOLS if name in available]
