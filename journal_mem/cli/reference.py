"""The command reference (`docs/commands.md`), rendered from the click CLI itself.

The reference is generated, never written by hand, so that it cannot drift from the
options the commands really take (pipx builds its CLI reference from its parser the
same way). `python -m journal_mem.cli.reference > docs/commands.md` regenerates it;
a test fails when the file and `render()` differ.

The output depends only on the commands' declarations: commands in the order
`list_commands` gives (sorted by name), no terminal width, no wall-clock time, no
path of this machine.
"""

from __future__ import annotations

import copy
import inspect
import re
import sys

import click

from journal_mem.cli import cli

REGENERATE = "python -m journal_mem.cli.reference > docs/commands.md"
PROG = "jmem"

# Markdown that help text must not trigger by accident: a backslash, emphasis, `_` at a
# word's edge, and raw HTML (`<git-common-dir>` would vanish as an unknown tag; `1<=x`
# is no tag and stays as it is).
_SPECIAL = re.compile(r"[\\*]|<(?=[A-Za-z/!?])|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
_CODE_SPAN = re.compile(r"(`[^`]*`)")
_LINE_START = re.compile(r"^(#|>|[-+]\s|\d+[.)]\s)")


def escape(text: str) -> str:
    """`text` as literal markdown, code spans (`...`) kept as code."""
    parts = _CODE_SPAN.split(text)  # odd indices: the code spans
    out = [p if i % 2 else _SPECIAL.sub(lambda m: "\\" + m.group(0), p)
           for i, p in enumerate(parts)]
    return _LINE_START.sub(r"\\\1", "".join(out))


def help_paragraphs(help_text: str | None) -> list[str]:
    """A command's help as markdown paragraphs, cleaned the way click's `--help` does.

    Click rewraps every paragraph except one that starts with a `\\b` line: those
    become code blocks, the others one line each. Text after `\\f` is not help.
    """
    text = inspect.cleandoc(help_text or "").partition("\f")[0]
    out = []
    for block in re.split(r"\n\s*\n", text.strip()):
        lines = block.splitlines()
        if not lines:
            continue
        if lines[0].strip() == "\b":
            out.append("```text\n" + "\n".join(lines[1:]) + "\n```")
        else:
            out.append(escape(" ".join(line.strip() for line in lines)))
    return out


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to `-`."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def context(command: click.Command, name: str, parent: click.Context | None) -> click.Context:
    """The context `--help` would render `command` in (its own context settings)."""
    return click.Context(command, info_name=name, parent=parent, **command.context_settings)


def walk(command: click.Command,
         click_ctx: click.Context) -> list[tuple[click.Command, click.Context]]:
    """`command` and every command below it, depth first, each with its context."""
    found = [(command, click_ctx)]
    if isinstance(command, click.Group):
        for name in command.list_commands(click_ctx):
            sub = command.get_command(click_ctx, name)
            if sub is not None:
                found.extend(walk(sub, context(sub, name, click_ctx)))
    return found


def option_record(param: click.Parameter, click_ctx: click.Context) -> tuple[str, str] | None:
    """An option's names and help as `--help` shows them; hidden ones too, marked."""
    if not isinstance(param, click.Option):
        return None
    shown = param
    if param.hidden:
        shown = copy.copy(param)
        shown.hidden = False
    record = shown.get_help_record(click_ctx)
    if record is None:
        return None
    names, text = record
    if param.hidden:
        text = f"{text} (hidden from --help)".lstrip()
    return names, text


def render_command(command: click.Command, click_ctx: click.Context) -> list[str]:
    """One command's section: heading, usage, help, options, and its subcommands."""
    path = click_ctx.command_path
    usage = " ".join([path, *command.collect_usage_pieces(click_ctx)])
    out = [f"## {path}", "", "```text", usage, "```", ""]
    if command.hidden:
        out += ["Hidden from `--help`: other programs run it, not people.", ""]
    if command.deprecated:
        out += ["Deprecated.", ""]
    for paragraph in help_paragraphs(command.help):
        out += [paragraph, ""]
    help_names = set(command.get_help_option_names(click_ctx))
    records = [option_record(p, click_ctx) for p in command.get_params(click_ctx)
               if not help_names & set(getattr(p, "opts", []))]
    options = [r for r in records if r is not None]
    if options:
        out += ["Options:", ""]
        out += [f"* `{names}`: {escape(text)}" if text else f"* `{names}`"
                for names, text in options]
        out.append("")
    if isinstance(command, click.Group):
        out += ["Commands:", ""]
        for name in command.list_commands(click_ctx):
            sub = command.get_command(click_ctx, name)
            if sub is not None:
                out.append(f"* [{path} {name}](#{slug(f'{path} {name}')})")
        out.append("")
    return out


def render() -> str:
    """The whole reference as markdown, ending in one newline."""
    out = [
        "# Command reference",
        "",
        "<!-- Generated from the CLI; do not edit. Regenerate with:",
        f"     {REGENERATE} -->",
        "",
        "Every command and option of `jmem` (also installed as `journal-mem`), generated",
        "from the CLI itself: the text `--help` prints, plus the few commands and options",
        "hidden from it, marked as such. Every command also takes `-h` / `--help`.",
        "",
        "Regenerate this page after changing a command:",
        "",
        "```sh",
        REGENERATE,
        "```",
        "",
    ]
    root = context(cli, PROG, None)
    for command, click_ctx in walk(cli, root):
        out += render_command(command, click_ctx)
    return "\n".join(out).rstrip("\n") + "\n"


if __name__ == "__main__":
    sys.stdout.buffer.write(render().encode("utf-8"))
