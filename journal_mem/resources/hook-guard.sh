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
# Nearly every commit stages nothing shaped like memory: that is answered here, by one
# git call and no python, unless a JMEM_* variable or the config could change where
# memory is or whether the guard runs (then, as on any doubt, the guard decides).
quick=1
case "${JMEM_DISABLE-}${JMEM_MEMORY_ROOT-}${JMEM_HOOKS_GUARD-}" in ?*) quick=0 ;; esac
if [ "$quick" = 1 ] && [ -e @CONFIG@ ]; then
    grep -Eq "^[^#]*(memory_root|guard)[\"']?[[:space:]]*=" @CONFIG@ 2>/dev/null
    [ $? = 1 ] || quick=0
fi
if [ "$quick" = 1 ]; then
    staged=$(git diff --cached --name-only --no-renames --no-color) || staged='"'
    printf '%s\n' "$staged" | grep -Eq '@MEMORY_RE@'
    [ $? = 1 ] && exit 0  # 1: no line matched (2, grep failed: the guard decides)
fi
exec @COMMAND@
