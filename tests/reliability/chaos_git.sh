#!/bin/sh
# `git` for the chaos test, first on the coordinator's PATH: it runs the real git
# ($CHAOS_REAL_GIT). The $CHAOS_GIT_KILL_NTH-th time the coordinator (its parent,
# `python -m seawall ...`) runs `git $CHAOS_GIT_KILL_AT`, the coordinator is SIGKILLed
# while the real command runs, one of these ways ($CHAOS_GIT_KILL_HOW):
#   lock   - once git holds its lock, git is killed too, so the lock stays behind
#            (update-ref holds its ref lock for microseconds: a reference-transaction
#            hook keeps it in the "prepared" state, with the lock held, until the kill)
#   delay  - after $CHAOS_GIT_KILL_DELAY seconds, git is killed too (if still running)
#   parent - only the coordinator is killed; git finishes on its own
#   after  - once git has finished, the coordinator is killed before it reads the result
# Every other call is the real git, unchanged.
real="$CHAOS_REAL_GIT"
if [ "$1" != "$CHAOS_GIT_KILL_AT" ]; then
    exec "$real" "$@"
fi
case "$(tr '\0' ' ' < "/proc/$PPID/cmdline" 2>/dev/null)" in
    *" -m seawall "*) ;;
    *) exec "$real" "$@" ;;
esac
count="$CHAOS_LOG/git-kill.count"
n=$(($(cat "$count" 2>/dev/null || echo 0) + 1))
echo "$n" > "$count"
if [ "$n" -ne "$CHAOS_GIT_KILL_NTH" ]; then
    exec "$real" "$@"
fi
coordinator=$PPID
holding="$CHAOS_LOG/git-kill.holding"  # the hook's pid, once git holds the ref lock
ready="$("$real" rev-parse --git-dir)/index.lock"
if [ "$1" = "update-ref" ]; then
    ready="$holding"
    if [ "$CHAOS_GIT_KILL_HOW" = lock ]; then
        hooks="$CHAOS_LOG/hooks"
        mkdir -p "$hooks"
        printf '#!/bin/sh\n[ "$1" = prepared ] || exit 0\necho $$ > "%s"\nexec sleep 60\n' \
            "$holding" > "$hooks/reference-transaction"
        chmod +x "$hooks/reference-transaction"
        set -- -c "core.hooksPath=$hooks" "$@"
    fi
fi
echo "$CHAOS_GIT_KILL_HOW $*" > "$CHAOS_LOG/git-kill.fired"
"$real" "$@" &
child=$!
running() {  # the real git runs (a zombie does not)
    state=Z
    read -r _ _ state _ 2>/dev/null < "/proc/$child/stat"
    [ "$state" != Z ]
}
case "$CHAOS_GIT_KILL_HOW" in
    lock)
        hook=
        while running && [ ! -e "$ready" ]; do :; done
        while running && [ "$ready" = "$holding" ] && [ -z "$hook" ]; do
            read -r hook 2>/dev/null < "$holding"
        done
        kill -9 "$child" "$coordinator" $hook 2>/dev/null
        ;;
    delay)
        sleep "$CHAOS_GIT_KILL_DELAY"
        kill -9 "$child" "$coordinator" 2>/dev/null
        ;;
    parent)
        kill -9 "$coordinator"
        ;;
    after)
        wait "$child"
        kill -9 "$coordinator"
        ;;
esac
wait "$child" 2>/dev/null
exit 137
