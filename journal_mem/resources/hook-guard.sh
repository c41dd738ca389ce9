#!/bin/sh
@MARKER@ (installed by `jmem init`; `jmem init --uninstall` removes it)
here=$(dirname "$0")
if [ -x "$here/@LEGACY@" ]; then
    "$here/@LEGACY@" "$@" || exit $?
fi
if [ ! -x @PYTHON_QUOTED@ ]; then
    echo "jmem guard: @PYTHON@ is gone; run \`jmem init\` again to reinstall the hooks" >&2
    exit 1
fi
exec @COMMAND@
