#!/bin/sh
@MARKER@ (installed by `jmem init`; `jmem init --uninstall` removes it)
here=$(dirname "$0")
if [ -x "$here/@LEGACY@" ]; then
    "$here/@LEGACY@" "$@"
fi
if [ -x @PYTHON_QUOTED@ ]; then
    @COMMAND@
fi
exit 0
