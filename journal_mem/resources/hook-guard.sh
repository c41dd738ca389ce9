#!/bin/sh
@MARKER@ (installed by `jmem init`; `jmem init --uninstall` removes it)
# main checkout: mark this git busy while it lives (a distill then waits to commit)
[ -d .git ] && mkdir -p .git/journal-mem/busy 2>/dev/null && : > ".git/journal-mem/busy/$PPID" 2>/dev/null
here=$(dirname "$0")
if [ -x "$here/@LEGACY@" ]; then
    "$here/@LEGACY@" "$@" || exit $?
fi
if [ ! -x @PYTHON_QUOTED@ ]; then
    echo "jmem guard: @PYTHON@ is gone; run \`jmem init\` again to reinstall the hooks" >&2
    exit 1
fi
exec @COMMAND@
