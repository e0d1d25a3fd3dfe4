"""Chat templates (webapp/tokenizer/chat/templates.py): reading tokenizer_config.json, rendering, limits, errors.

The expected renderings are written out here, by hand, from each model's
published format (not by running any template); transformers, where
installed, must agree too. Encoding the rendered text is tested through the
API (tests/app/test_chat_api.py).
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from webapp.tokenizer import (
    ChatTemplate,
    TokenizerError,
    dumps_stored,
    import_tokenizer,
    loads_stored,
    preset_chat_template,
    render_chat,
)
from webapp.tokenizer.chat.templates import ChatLimits, parse_chat_config, validate_messages
from webapp.tokenizer.chat.templates import preset_config_path

MESSAGES = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Hi <b>!"},
    {"role": "assistant", "content": "Hello."},
    {"role": "user", "content": "2+2?"},
]


def written_llama3(messages: list[dict[str, str]], prompt: bool) -> str:
    # Llama 3's format: every turn a header and <|eot_id|>; this template always ends with the assistant header.
    out = "<|begin_of_text|>"
    for m in messages:
        out += f"<|start_header_id|>{m['role']}<|end_header_id|>\n\n{m['content'].strip()}<|eot_id|>"
    return out + "<|start_header_id|>assistant<|end_header_id|>\n\n"


def written_qwen3(messages: list[dict[str, str]], prompt: bool) -> str:
    out = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
    return out + ("<|im_start|>assistant\n" if prompt else "")


def written_deepseek_v3(messages: list[dict[str, str]], prompt: bool) -> str:
    out = "<｜begin▁of▁sentence｜>"
    for m in messages:
        if m["role"] == "system":
            out += m["content"]
        elif m["role"] == "user":
            out += f"<｜User｜>{m['content']}"
        else:
            out += f"<｜Assistant｜>{m['content']}<｜end▁of▁sentence｜>"
    return out + ("<｜Assistant｜>" if prompt else "")


def written_gemma3(messages: list[dict[str, str]], prompt: bool) -> str:
    # Gemma folds the system message into the first user turn; the assistant is "model".
    system = messages[0]["content"] + "\n\n" if messages[0]["role"] == "system" else ""
    rest = messages[1:] if system else messages
    out = "<bos>"
    for i, m in enumerate(rest):
        role = "model" if m["role"] == "assistant" else m["role"]
        out += f"<start_of_turn>{role}\n{(system if i == 0 else '') + m['content'].strip()}<end_of_turn>\n"
    return out + ("<start_of_turn>model\n" if prompt else "")


WRITTEN = {"llama3": written_llama3, "qwen3": written_qwen3, "deepseek_v3": written_deepseek_v3,
           "gemma3": written_gemma3}


@pytest.mark.parametrize("prompt", [False, True])
@pytest.mark.parametrize("model", sorted(WRITTEN))
def test_each_models_template_renders_as_written(model: str, prompt: bool) -> None:
    template = preset_chat_template(model)
    assert template is not None
    assert render_chat(template, MESSAGES, add_generation_prompt=prompt) == WRITTEN[model](MESSAGES, prompt)
    one = MESSAGES[1:2]
    assert render_chat(template, one, add_generation_prompt=prompt) == WRITTEN[model](one, prompt)


@pytest.mark.parametrize("model", sorted(WRITTEN))
def test_transformers_renders_the_same(model: str) -> None:
    transformers = pytest.importorskip("transformers")
    template = preset_chat_template(model)
    assert template is not None
    path = preset_config_path(model)
    assert path is not None
    library = transformers.PreTrainedTokenizerFast(
        tokenizer_file=str(path.parent / "tokenizer.json"), chat_template=template.template,
        bos_token=template.bos_token, eos_token=template.eos_token)
    for prompt in (False, True):
        assert render_chat(template, MESSAGES, add_generation_prompt=prompt) == library.apply_chat_template(
            MESSAGES, tokenize=False, add_generation_prompt=prompt)


def test_models_without_a_template() -> None:
    assert preset_chat_template("gpt_oss") is None  # its tokenizer_config.json has none
    assert preset_chat_template("llama2") is None
    assert preset_chat_template("cl100k_base") is None


# --- tokenizer_config.json ----------------------------------------------------


def test_config_forms() -> None:
    doc = {"chat_template": "{{ bos_token }}x{{ eos_token }}", "bos_token": {"__type": "AddedToken", "content": "<s>"},
           "eos_token": "</s>"}
    template = parse_chat_config(json.dumps(doc))
    assert template == ChatTemplate("{{ bos_token }}x{{ eos_token }}", "<s>", "</s>")
    assert render_chat(template, []) == "<s>x</s>"
    named = {"chat_template": [{"name": "tool_use", "template": "T"}, {"name": "default", "template": "D"}]}
    assert parse_chat_config(json.dumps(named)) == ChatTemplate("D", tool_use="T")  # (rendered when tools are given)
    assert ChatTemplate.from_json(ChatTemplate("D", tool_use="T").to_json()) == ChatTemplate("D", tool_use="T")
    assert "tool_use" not in ChatTemplate("D").to_json()  # a template stored before keeps its id
    assert parse_chat_config("{}") is None
    with pytest.raises(TokenizerError) as bad:
        parse_chat_config('{"chat_template": 3}')
    assert bad.value.field == "config" and "chat_template should be a string" in bad.value.message
    with pytest.raises(TokenizerError) as bad:
        parse_chat_config('{"chat_template": "x",\n "bos_token": }')
    assert bad.value.field == "config" and bad.value.location["line"] == 2
    with pytest.raises(TokenizerError) as big:
        parse_chat_config(json.dumps({"chat_template": "x" * 101}), ChatLimits(template_chars=100))
    assert big.value.field == "chat_template" and "LIMIT_CHAT_TEMPLATE_CHARS" in big.value.message


def test_a_template_opened_with_a_file_is_kept_in_its_stored_form() -> None:
    vocab = {"a": 0, "b": 1, "ab": 2}
    content = json.dumps({"model": {"type": "BPE", "vocab": vocab, "merges": ["a b"]}, "added_tokens": []})
    config = json.dumps({"chat_template": "{% for m in messages %}{{ m.content }}{% endfor %}"})
    plain = import_tokenizer(content, fmt="hf")
    tok = import_tokenizer(content, fmt="hf", config=config)
    assert not plain.chat and ChatTemplate.from_json(tok.chat).template.startswith("{% for m")
    assert loads_stored(dumps_stored(tok)) == tok
    assert dumps_stored(tok) != dumps_stored(plain)  # another template, another id
    assert tok.summary()["chat_template"] is True


# --- messages -----------------------------------------------------------------


@pytest.mark.parametrize("value, message, location", [
    ({"role": "user"}, "messages: expected a list", {}),
    (["hi"], "messages[0]: expected an object with role and content, got a string", {"index": 0}),
    ([{"role": "user", "content": "a"}, {"role": "user"}], "messages[1]: content is missing",
     {"index": 1, "key": "content"}),
    ([{"role": 1, "content": "a"}], "messages[0].role: expected a string, got a number", {"index": 0, "key": "role"}),
    ([{"role": "user", "content": "a", "name": "x"}], "messages[0]: unknown key 'name'", {"index": 0, "key": "name"}),
])
def test_bad_messages_are_named_with_their_place(value: Any, message: str, location: dict[str, Any]) -> None:
    with pytest.raises(TokenizerError) as exc:
        validate_messages(value)
    assert exc.value.field == "messages"
    assert exc.value.message.startswith(message)
    assert exc.value.location == location


def test_message_limits_are_checked_first() -> None:
    with pytest.raises(TokenizerError) as exc:
        validate_messages([{"role": "user", "content": ""}] * 4, ChatLimits(messages=3))
    assert "4 messages is over the limit of 3 messages (setting LIMIT_CHAT_MESSAGES)" in exc.value.message
    with pytest.raises(TokenizerError) as exc:
        validate_messages([{"role": "user", "content": "x" * 60}] * 2, ChatLimits(message_chars=100))
    assert exc.value.location == {"index": 1, "limit": 100}


# --- untrusted templates --------------------------------------------------------


def failure(source: str, limits: ChatLimits = ChatLimits(seconds=0.5)) -> TokenizerError:
    with pytest.raises(TokenizerError) as exc:
        render_chat(ChatTemplate(source), MESSAGES, limits=limits)
    assert exc.value.field == "chat_template"
    return exc.value


def test_raise_exception_names_the_line_and_the_message() -> None:
    err = failure("{% for m in messages %}\n{% if m.role == 'tool' %}{% endif %}\n"
                  "{% if m.role == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}"
                  "{% endfor %}")
    assert err.message == "chat_template: the template raised an exception at line 3: System role not supported"
    assert err.location == {"line": 3}


def test_syntax_and_runtime_errors_name_the_line() -> None:
    err = failure("ok\n\n{% for m in messages %}\n{{ m.content }")
    assert err.location == {"line": 4} and "does not parse at line 4" in err.message
    err = failure("{{ messages[0].content }}\n{{ 1 // 0 }}")
    assert err.location == {"line": 2} and "failed at line 2" in err.message
    err = failure("a\n{{ nothing.here }}")
    assert err.location == {"line": 2} and "'nothing' is undefined" in err.message


def test_the_sandbox_holds() -> None:
    for source in ("{{ messages.__class__.__mro__[1].__subclasses__() }}", "{{ ''.__class__.__base__ }}",
                   "{{ cycler.__init__.__globals__ }}"):
        try:
            out = render_chat(ChatTemplate(source), MESSAGES)
        except TokenizerError as exc:
            assert exc.field == "chat_template"
        else:
            assert "class" not in out and "function" not in out
    failure("{% set ns = namespace(_x=1) %}")
    failure("{% set x = messages.append(1) %}")  # the environment is immutable


@pytest.mark.parametrize("source", [
    '{{ "x" * 10**9 }}',
    '{{ "a"|center(10**9) }}',
    '{{ "ab".ljust(10**9) }}',
    '{{ "{:>999999999}".format(1) }}',
    '{{ "%999999999s" % 1 }}',
    '{% set ns = namespace(s="ab") %}{% for i in range(40) %}{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s|length }}',
    '{{ (messages[1].content * 1000).replace("", messages[1].content * 1000) }}',
    '{% for i in range(100000) %}{{ "0123456789" * 2 }}{% endfor %}',
    '{{ 2 ** 100000 }}',
])
@pytest.mark.alone
def test_values_over_the_rendered_size_are_refused_before_they_are_built(source: str) -> None:
    start = time.perf_counter()
    err = failure(source, ChatLimits(rendered_chars=1_000_000, seconds=5))
    assert time.perf_counter() - start < 1
    assert "refused" in err.message
    assert "LIMIT_CHAT_RENDERED_CHARS" in err.message or "exponent" in err.message


@pytest.mark.alone
def test_a_template_that_runs_too_long_is_stopped() -> None:
    start = time.perf_counter()
    err = failure("{% set r = range(100000)|list %}\n{% for i in r %}{% for j in r %}{% endfor %}{% endfor %}",
                  ChatLimits(seconds=0.3))
    assert time.perf_counter() - start < 1.5
    assert "took over 0.3 s" in err.message and "LIMIT_CHAT_SECONDS" in err.message and err.location == {"line": 2}


@pytest.mark.alone
def test_a_short_deadline_after_a_long_one_is_kept() -> None:
    """The watchdog wakes for a new watch only when it would sleep past its deadline: one with a long
    deadline first (it sleeps until then), then a rendering with a short one, stopped in time."""
    from webapp.tokenizer.chat.watchdog import WATCHDOG

    waiting = WATCHDOG.watch(time.monotonic() + 60)
    try:
        start = time.perf_counter()
        err = failure("{% set r = range(100000)|list %}\n{% for i in r %}{% for j in r %}{% endfor %}{% endfor %}",
                      ChatLimits(seconds=0.3))
        assert time.perf_counter() - start < 1.5
        assert "took over 0.3 s" in err.message
    finally:
        assert not WATCHDOG.release(waiting)


def test_template_size_is_checked_before_compiling() -> None:
    err = failure("{{ x }}" * 100, ChatLimits(template_chars=50))
    assert "700 characters is over the limit of 50" in err.message


def test_deadlines_never_leak_out_of_a_rendering() -> None:
    """Deadlines that fire around the end of renderings: each one returns or is refused, nothing
    reaches the code after it, in several threads at once."""
    import threading

    template = preset_chat_template("qwen3")
    assert template is not None
    outcomes: list[str] = []

    def work() -> None:
        for i in range(60):
            try:
                render_chat(template, MESSAGES * 3, limits=ChatLimits(seconds=0.0002 * (i % 7)))
                outcomes.append("ok")
            except TokenizerError as exc:
                assert "LIMIT_CHAT_SECONDS" in exc.message
                outcomes.append("refused")
            total = sum(range(20_000))  # a leaked exception would be raised in here
            assert total == 199_990_000

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(outcomes) == 180 and "refused" in outcomes
