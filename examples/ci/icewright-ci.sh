#!/usr/bin/env bash
# icewright-ci.sh: every shell step of github-actions.yml and gitlab-ci.yml;
# examples/workflows_test.go runs those workflows' steps as written (and
# examples/ci_test.go this script's cases).
#
#   icewright-ci.sh check     fmt -check and validate
#   icewright-ci.sh plan      plan -out -detailed-exitcode, then the Markdown view
#   icewright-ci.sh comment   post the Markdown plan as one pull-request comment,
#                          updated in place on every push
#   icewright-ci.sh apply     after merge: apply the reviewed plan file
#                          (ICEWRIGHT_APPLY_MODE=artifact, the default) or plan
#                          again and apply that (ICEWRIGHT_APPLY_MODE=replan)
#
# Environment (all optional):
#   ICEWRIGHT            the icewright binary (default: icewright on PATH)
#   ICEWRIGHT_DIR        the configuration directory (default: .)
#   ICEWRIGHT_PLAN       the saved plan, kept as an artifact (default: icewright.plan)
#   ICEWRIGHT_COMMENT    the Markdown comment body (default: icewright-plan.md)
#   ICEWRIGHT_APPLY_LOG  apply's output, kept as an artifact and added to the
#                     GitHub job summary (default: icewright-apply.txt)
#                     (all three relative to the job's directory, not ICEWRIGHT_DIR)
#   GITHUB_TOKEN      with GITHUB_REPOSITORY and a pull_request event (or
#                     ICEWRIGHT_PR): comment on GitHub
#   ICEWRIGHT_GITLAB_TOKEN  with CI_MERGE_REQUEST_IID: comment on GitLab (the
#                     job token cannot write notes; use a project access
#                     token with the api scope)
# Without a token, comment leaves the body in $ICEWRIGHT_COMMENT and says so.
# Tokens reach curl on its standard input, never its arguments, and are
# never printed.
set -euo pipefail
set +x

ICEWRIGHT=${ICEWRIGHT:-icewright}
ICEWRIGHT_DIR=${ICEWRIGHT_DIR:-.}
ICEWRIGHT_PLAN=${ICEWRIGHT_PLAN:-icewright.plan}
ICEWRIGHT_COMMENT=${ICEWRIGHT_COMMENT:-icewright-plan.md}
ICEWRIGHT_APPLY_LOG=${ICEWRIGHT_APPLY_LOG:-icewright-apply.txt}
# icewright reads paths relative to -chdir; the jobs name them relative to here.
if [[ $ICEWRIGHT_PLAN != /* ]]; then
	ICEWRIGHT_PLAN=$PWD/$ICEWRIGHT_PLAN
fi
# No "run icewright apply next" hints in a pipeline's log.
export ICEWRIGHT_IN_AUTOMATION=1

# "command" runs the binary, never this function: with the default
# ICEWRIGHT=icewright a plain "$ICEWRIGHT" would call the function itself, forever.
icewright() { command "$ICEWRIGHT" -chdir="$ICEWRIGHT_DIR" "$@"; }

# output NAME VALUE: a step output for later GitHub steps; a no-op elsewhere.
output() {
	if [[ -n ${GITHUB_OUTPUT:-} ]]; then
		echo "$1=$2" >>"$GITHUB_OUTPUT"
	fi
}

cmd_check() {
	icewright fmt -check
	icewright validate
}

# plan: exit 0 (no changes) and 2 (changes) are both success; anything else
# (1: an error, such as a catalog that cannot be reached) fails the job.
cmd_plan() {
	local rc=0
	icewright plan -input=false -detailed-exitcode -out="$ICEWRIGHT_PLAN" || rc=$?
	case $rc in
	0) output changes false ;;
	2) output changes true ;;
	*)
		echo "icewright-ci: plan failed (exit $rc)" >&2
		# The comment says the plan failed, in place of the last plan's
		# ("No changes" must not stay up): the Markdown plan renders the
		# errors (a catalog that cannot be reached, a configuration error).
		# Nothing is saved by it.
		icewright plan -input=false -format=markdown >"$ICEWRIGHT_COMMENT" 2>/dev/null || true
		if [[ -n ${GITHUB_STEP_SUMMARY:-} && -s $ICEWRIGHT_COMMENT ]]; then
			cat "$ICEWRIGHT_COMMENT" >>"$GITHUB_STEP_SUMMARY"
		fi
		return "$rc"
		;;
	esac
	# show reads the plan file, so the comment is exactly what apply will do.
	icewright show -format=markdown "$ICEWRIGHT_PLAN" >"$ICEWRIGHT_COMMENT"
	if [[ -n ${GITHUB_STEP_SUMMARY:-} ]]; then
		cat "$ICEWRIGHT_COMMENT" >>"$GITHUB_STEP_SUMMARY"
	fi
}

# api METHOD URL [curl options...]: the authorization header is read by
# curl from its standard input (--config -), so it is in no process list.
api() {
	local method=$1 url=$2
	shift 2
	printf 'header = "%s"\n' "$AUTH_HEADER" |
		curl --fail --silent --show-error --config - -X "$method" \
			-H 'Content-Type: application/json' "$@" "$url"
}

# find_comment LIST_URL: the id of the first comment whose body starts with
# the marker, looking through up to 20 pages of 100.
find_comment() {
	local page id
	for page in $(seq 1 20); do
		local body
		body=$(api GET "$1?per_page=100&page=$page")
		id=$(jq -r --arg m "$MARKER" '[.[] | select(.body | startswith($m))][0].id // empty' <<<"$body")
		if [[ -n $id ]]; then
			echo "$id"
			return
		fi
		if [[ $(jq length <<<"$body") -lt 100 ]]; then
			return
		fi
	done
}

cmd_comment() {
	if [[ ! -s $ICEWRIGHT_COMMENT ]]; then
		echo "icewright-ci: $ICEWRIGHT_COMMENT is missing or empty; run plan first" >&2
		return 1
	fi
	# The marker is the view's first line (views.PlanMarker): one place.
	MARKER=$(head -n 1 "$ICEWRIGHT_COMMENT")
	if [[ $MARKER != '<!--'*'-->' ]]; then
		echo "icewright-ci: $ICEWRIGHT_COMMENT does not start with the icewright marker" >&2
		return 1
	fi
	local pr=${ICEWRIGHT_PR:-} list update method
	if [[ -n ${GITHUB_TOKEN:-} ]]; then
		if [[ -z $pr && -n ${GITHUB_EVENT_PATH:-} ]]; then
			pr=$(jq -r '.pull_request.number // empty' "$GITHUB_EVENT_PATH")
		fi
		if [[ -z $pr ]]; then
			echo "icewright-ci: not a pull request; no comment posted" >&2
			return 0
		fi
		local api_url=${GITHUB_API_URL:-https://api.github.com}/repos/$GITHUB_REPOSITORY
		AUTH_HEADER="Authorization: Bearer $GITHUB_TOKEN"
		list=$api_url/issues/$pr/comments
		update=$api_url/issues/comments
		method=PATCH
	elif [[ -n ${ICEWRIGHT_GITLAB_TOKEN:-} && -n ${CI_MERGE_REQUEST_IID:-} ]]; then
		pr=$CI_MERGE_REQUEST_IID
		AUTH_HEADER="PRIVATE-TOKEN: $ICEWRIGHT_GITLAB_TOKEN"
		list=$CI_API_V4_URL/projects/$CI_PROJECT_ID/merge_requests/$pr/notes
		update=$list
		method=PUT
	else
		echo "icewright-ci: no token; the comment body is in $ICEWRIGHT_COMMENT (not posted)"
		return 0
	fi
	# curl's standard input carries the token, so the body goes in a file.
	local id
	PAYLOAD=$(mktemp)
	trap 'rm -f "$PAYLOAD"' EXIT
	# GitHub refuses comments over 65,536 characters: keep everything before
	# the per-table details (summary, destructive actions, warnings) then.
	if [[ $(wc -c <"$ICEWRIGHT_COMMENT") -gt 65000 ]]; then
		awk '/^<details>/ { exit } { print }' "$ICEWRIGHT_COMMENT"
		echo "_The per-table details are too long for a comment; they are in the job's plan artifact._"
	else
		cat "$ICEWRIGHT_COMMENT"
	fi | jq -Rs '{body: .}' >"$PAYLOAD"
	id=$(find_comment "$list")
	if [[ -n $id ]]; then
		api "$method" "$update/$id" --data-binary "@$PAYLOAD" >/dev/null
		echo "icewright-ci: updated comment $id on #$pr"
	else
		api POST "$list" --data-binary "@$PAYLOAD" >/dev/null
		echo "icewright-ci: commented on #$pr"
	fi
}

# apply_logged ARGS...: icewright apply, its output also in $ICEWRIGHT_APPLY_LOG
# (the artifact) and in the GitHub job summary; the exit code is apply's.
apply_logged() {
	local rc=0
	icewright apply "$@" 2>&1 | tee "$ICEWRIGHT_APPLY_LOG" || rc=$?
	if [[ -n ${GITHUB_STEP_SUMMARY:-} ]]; then
		{
			echo "### icewright apply (exit $rc)"
			echo
			echo '```'
			cat "$ICEWRIGHT_APPLY_LOG"
			echo '```'
		} >>"$GITHUB_STEP_SUMMARY"
	fi
	return "$rc"
}

cmd_apply() {
	case ${ICEWRIGHT_APPLY_MODE:-artifact} in
	artifact)
		if [[ ! -f $ICEWRIGHT_PLAN ]]; then
			echo "icewright-ci: no plan file $ICEWRIGHT_PLAN to apply" >&2
			return 1
		fi
		# icewright refuses a plan whose tables' effective policy changed since;
		# then run this job again with ICEWRIGHT_APPLY_MODE=replan.
		apply_logged -input=false -auto-approve "$ICEWRIGHT_PLAN"
		;;
	replan)
		local rc=0
		icewright plan -input=false -detailed-exitcode -out="$ICEWRIGHT_PLAN" || rc=$?
		case $rc in
		0) echo "icewright-ci: every table is in policy; nothing to apply" | tee "$ICEWRIGHT_APPLY_LOG" ;;
		2) apply_logged -input=false -auto-approve "$ICEWRIGHT_PLAN" ;;
		*) return "$rc" ;;
		esac
		;;
	*)
		echo "icewright-ci: ICEWRIGHT_APPLY_MODE must be artifact or replan" >&2
		return 1
		;;
	esac
}

case ${1:-} in
check | plan | comment | apply) "cmd_$1" ;;
*)
	echo "usage: icewright-ci.sh check|plan|comment|apply" >&2
	exit 64
	;;
esac
