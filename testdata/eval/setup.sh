#!/usr/bin/env bash
# Materialises the starter suite: each tasks/<id>/src/ becomes the git
# repository tasks/<id>/repo/ with one commit, the task's base commit.
# Author, committer, dates and message are fixed, so the commit's SHA is
# the same on every machine and matches task.yml's `commit:`; a mismatch
# (an edited src/ without an updated task.yml) is an error.
#
# Usage: bash testdata/eval/setup.sh [--update]
#   --update  rewrite each task.yml's commit: line instead of checking it
#             (for authors who changed a task's src/)
# Env:   EVAL_TASKS (default: the tasks/ directory beside this script)
set -euo pipefail

tasks=${EVAL_TASKS:-$(cd "$(dirname "$0")" && pwd)/tasks}
update=${1:-}

export GIT_AUTHOR_NAME="Patchwright Eval" GIT_AUTHOR_EMAIL="eval@patchwright.invalid"
export GIT_COMMITTER_NAME="Patchwright Eval" GIT_COMMITTER_EMAIL="eval@patchwright.invalid"
export GIT_AUTHOR_DATE="2026-01-01T00:00:00Z" GIT_COMMITTER_DATE="2026-01-01T00:00:00Z"
# Nothing from the user's or the system's git configuration (hooks,
# signing, line-ending conversion) may change the commit.
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null

failed=0
for dir in "$tasks"/*/; do
	dir=${dir%/}
	[ -d "$dir/src" ] || continue
	id=$(basename "$dir")
	rm -rf "$dir/repo"
	mkdir "$dir/repo"
	cp -R "$dir/src/." "$dir/repo/"
	git -C "$dir/repo" init -q --initial-branch=main
	git -C "$dir/repo" -c core.autocrlf=false add -A
	git -C "$dir/repo" -c commit.gpgsign=false commit -q -m "base"
	sha=$(git -C "$dir/repo" rev-parse HEAD)
	if [ "$update" = --update ]; then
		sed -i "s/^commit: .*/commit: $sha/" "$dir/task.yml"
		echo "$id $sha (task.yml updated)"
	elif ! grep -qx "commit: $sha" "$dir/task.yml"; then
		echo "setup.sh: $id: the repository's commit is $sha but task.yml says $(grep '^commit:' "$dir/task.yml"); run with --update if src/ changed on purpose" >&2
		failed=1
	fi
done
[ "$failed" = 0 ] || exit 1
echo "materialised $(ls -d "$tasks"/*/repo | wc -l) task repositories under $tasks"
