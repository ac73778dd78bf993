#!/usr/bin/env bash
# Try Patchwright on a small Go repository with a bug (docs/examples/wordcount)
# and an issue describing it (docs/examples/issue.md).
#
# The example is copied into a temporary git repository, so nothing here
# changes. Patchwright clones it, works in a Docker sandbox and commits its
# change on a new branch agent/<slug> in that temporary repository; the
# pull-request body, result.json and the ledger go to ./patchwright-out.
#
# Needs: Docker, git and Go. The first time, the example's small sandbox
# image patchwright-example:go is built from docs/examples/Dockerfile (Go's
# toolchain only: about 370 MB, a minute or two, pulling two public images),
# unless --image names another one, e.g. the full sandbox image serve and
# worker use (deploy/sandbox/Dockerfile, every toolchain, about 1.9 GB):
#   bash docs/examples/try.sh --image patchwright-sandbox:bookworm
# With a model:
#   export PATCHWRIGHT_MODEL=openai:gpt-4.1 OPENAI_API_KEY=...
#   (or anthropic:claude-sonnet-4-5 with ANTHROPIC_API_KEY, or a local
#    OpenAI-compatible server: OPENAI_BASE_URL=http://localhost:11434/v1
#    PATCHWRIGHT_MODEL=openai:qwen2.5-coder:7b, no key needed)
#
# Without PATCHWRIGHT_MODEL (and without --model) no model is called: the
# run replays the model turns of docs/examples/wordcount.transcript.jsonl
# (--model replay:FILE), a transcript scripted by hand, not a model's output
# (docs/examples/README.md says how it was made). Everything else is real:
# the clone, the sandbox, the tools, the baseline and final checks, the
# commit and the report, each of which says that the turns were replayed.
#
# Usage, from the repository root: bash docs/examples/try.sh [patchwright run flags]
# e.g. bash docs/examples/try.sh --image patchwright-sandbox-test:latest --max-steps 20
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
if [ -z "${PATCHWRIGHT_MODEL:-}" ]; then
	case " $* " in
	*" --model"*) ;;
	*)
		export PATCHWRIGHT_MODEL=replay:docs/examples/wordcount.transcript.jsonl
		echo "no PATCHWRIGHT_MODEL: replaying the recorded transcript ${PATCHWRIGHT_MODEL#replay:} (no model is called)" >&2
		;;
	esac
fi

repo=$(mktemp -d "${TMPDIR:-/tmp}/patchwright-example-XXXXXX")
cp -R "$here/wordcount/." "$repo/"
git -C "$repo" init -q -b main
git -C "$repo" add -A
git -C "$repo" -c user.name=example -c user.email=example@example.com commit -qm "wordcount: first version"
echo "example repository: $repo" >&2

cd "$root"
# Build the example's small image once, unless another image was asked for.
image=()
case " $* " in
*" --image"*) ;;
*)
	if ! docker image inspect patchwright-example:go >/dev/null 2>&1; then
		echo "building the example's sandbox image patchwright-example:go from docs/examples/Dockerfile (once):" >&2
		echo "  Go's toolchain only, about 370 MB on disk, a minute or two (it pulls debian:bookworm-slim and golang:1.26-bookworm);" >&2
		echo "  to use an image you have instead: bash docs/examples/try.sh --image IMAGE" >&2
		docker build -q -t patchwright-example:go "$here" >&2
	fi
	image=(--image patchwright-example:go)
	;;
esac
status=0
go run ./cmd/patchwright run --repo "$repo" --issue-file "$here/issue.md" --out ./patchwright-out ${image[@]+"${image[@]}"} "$@" || status=$?
if [ "$status" = 0 ]; then
	echo >&2
	echo "see ./patchwright-out/pr.md, and ./patchwright-out/run.html in a browser; the change, if committed: git -C $repo log -p agent/count-is-wrong-for-text-with-extra-spaces" >&2
fi
exit "$status"
