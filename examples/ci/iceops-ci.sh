#!/usr/bin/env bash
# iceops-ci.sh: every shell step of github-actions.yml and gitlab-ci.yml;
# examples/workflows_test.go runs those workflows' steps as written (and
# examples/ci_test.go this script's cases).
#
#   iceops-ci.sh check     fmt -check and validate
#   iceops-ci.sh plan      plan -out -detailed-exitcode, then the Markdown view
#   iceops-ci.sh comment   post the Markdown plan as one pull-request comment,
#                          updated in place on every push
#   iceops-ci.sh apply     after merge: apply the reviewed plan file
#                          (ICEOPS_APPLY_MODE=artifact, the default) or plan
#                          again and apply that (ICEOPS_APPLY_MODE=replan)
#
# Environment (all optional):
#   ICEOPS            the iceops binary (default: iceops on PATH)
#   ICEOPS_DIR        the configuration directory (default: .)
#   ICEOPS_PLAN       the saved plan, kept as an artifact (default: iceops.plan)
#   ICEOPS_COMMENT    the Markdown comment body (default: iceops-plan.md)
#   ICEOPS_APPLY_LOG  apply's output, kept as an artifact and added to the
#                     GitHub job summary (default: iceops-apply.txt)
#                     (all three relative to the job's directory, not ICEOPS_DIR)
#   GITHUB_TOKEN      with GITHUB_REPOSITORY and a pull_request event (or
#                     ICEOPS_PR): comment on GitHub
#   ICEOPS_GITLAB_TOKEN  with CI_MERGE_REQUEST_IID: comment on GitLab (the
#                     job token cannot write notes; use a project access
#                     token with the api scope)
# Without a token, comment leaves the body in $ICEOPS_COMMENT and says so.
# Tokens reach curl on its standard input, never its arguments, and are
# never printed.
set -euo pipefail
set +x

ICEOPS=${ICEOPS:-iceops}
ICEOPS_DIR=${ICEOPS_DIR:-.}
ICEOPS_PLAN=${ICEOPS_PLAN:-iceops.plan}
ICEOPS_COMMENT=${ICEOPS_COMMENT:-iceops-plan.md}
ICEOPS_APPLY_LOG=${ICEOPS_APPLY_LOG:-iceops-apply.txt}
# iceops reads paths relative to -chdir; the jobs name them relative to here.
if [[ $ICEOPS_PLAN != /* ]]; then
	ICEOPS_PLAN=$PWD/$ICEOPS_PLAN
fi
# No "run iceops apply next" hints in a pipeline's log.
export ICEOPS_IN_AUTOMATION=1

# "command" runs the binary, never this function: with the default
# ICEOPS=iceops a plain "$ICEOPS" would call the function itself, forever.
iceops() { command "$ICEOPS" -chdir="$ICEOPS_DIR" "$@"; }

# output NAME VALUE: a step output for later GitHub steps; a no-op elsewhere.
output() {
	if [[ -n ${GITHUB_OUTPUT:-} ]]; then
		echo "$1=$2" >>"$GITHUB_OUTPUT"
	fi
}

cmd_check() {
	iceops fmt -check
	iceops validate
}

# plan: exit 0 (no changes) and 2 (changes) are both success; anything else
# (1: an error, such as a catalog that cannot be reached) fails the job.
cmd_plan() {
	local rc=0
	iceops plan -input=false -detailed-exitcode -out="$ICEOPS_PLAN" || rc=$?
	case $rc in
	0) output changes false ;;
	2) output changes true ;;
	*)
		echo "iceops-ci: plan failed (exit $rc)" >&2
		return "$rc"
		;;
	esac
	# show reads the plan file, so the comment is exactly what apply will do.
	iceops show -format=markdown "$ICEOPS_PLAN" >"$ICEOPS_COMMENT"
	if [[ -n ${GITHUB_STEP_SUMMARY:-} ]]; then
		cat "$ICEOPS_COMMENT" >>"$GITHUB_STEP_SUMMARY"
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
	if [[ ! -s $ICEOPS_COMMENT ]]; then
		echo "iceops-ci: $ICEOPS_COMMENT is missing or empty; run plan first" >&2
		return 1
	fi
	# The marker is the view's first line (views.PlanMarker): one place.
	MARKER=$(head -n 1 "$ICEOPS_COMMENT")
	if [[ $MARKER != '<!--'*'-->' ]]; then
		echo "iceops-ci: $ICEOPS_COMMENT does not start with the iceops marker" >&2
		return 1
	fi
	local pr=${ICEOPS_PR:-} list update method
	if [[ -n ${GITHUB_TOKEN:-} ]]; then
		if [[ -z $pr && -n ${GITHUB_EVENT_PATH:-} ]]; then
			pr=$(jq -r '.pull_request.number // empty' "$GITHUB_EVENT_PATH")
		fi
		if [[ -z $pr ]]; then
			echo "iceops-ci: not a pull request; no comment posted" >&2
			return 0
		fi
		local api_url=${GITHUB_API_URL:-https://api.github.com}/repos/$GITHUB_REPOSITORY
		AUTH_HEADER="Authorization: Bearer $GITHUB_TOKEN"
		list=$api_url/issues/$pr/comments
		update=$api_url/issues/comments
		method=PATCH
	elif [[ -n ${ICEOPS_GITLAB_TOKEN:-} && -n ${CI_MERGE_REQUEST_IID:-} ]]; then
		pr=$CI_MERGE_REQUEST_IID
		AUTH_HEADER="PRIVATE-TOKEN: $ICEOPS_GITLAB_TOKEN"
		list=$CI_API_V4_URL/projects/$CI_PROJECT_ID/merge_requests/$pr/notes
		update=$list
		method=PUT
	else
		echo "iceops-ci: no token; the comment body is in $ICEOPS_COMMENT (not posted)"
		return 0
	fi
	# curl's standard input carries the token, so the body goes in a file.
	local id
	PAYLOAD=$(mktemp)
	trap 'rm -f "$PAYLOAD"' EXIT
	# GitHub refuses comments over 65,536 characters: keep everything before
	# the per-table details (summary, destructive actions, warnings) then.
	if [[ $(wc -c <"$ICEOPS_COMMENT") -gt 65000 ]]; then
		awk '/^<details>/ { exit } { print }' "$ICEOPS_COMMENT"
		echo "_The per-table details are too long for a comment; they are in the job's plan artifact._"
	else
		cat "$ICEOPS_COMMENT"
	fi | jq -Rs '{body: .}' >"$PAYLOAD"
	id=$(find_comment "$list")
	if [[ -n $id ]]; then
		api "$method" "$update/$id" --data-binary "@$PAYLOAD" >/dev/null
		echo "iceops-ci: updated comment $id on #$pr"
	else
		api POST "$list" --data-binary "@$PAYLOAD" >/dev/null
		echo "iceops-ci: commented on #$pr"
	fi
}

# apply_logged ARGS...: iceops apply, its output also in $ICEOPS_APPLY_LOG
# (the artifact) and in the GitHub job summary; the exit code is apply's.
apply_logged() {
	local rc=0
	iceops apply "$@" 2>&1 | tee "$ICEOPS_APPLY_LOG" || rc=$?
	if [[ -n ${GITHUB_STEP_SUMMARY:-} ]]; then
		{
			echo "### iceops apply (exit $rc)"
			echo
			echo '```'
			cat "$ICEOPS_APPLY_LOG"
			echo '```'
		} >>"$GITHUB_STEP_SUMMARY"
	fi
	return "$rc"
}

cmd_apply() {
	case ${ICEOPS_APPLY_MODE:-artifact} in
	artifact)
		if [[ ! -f $ICEOPS_PLAN ]]; then
			echo "iceops-ci: no plan file $ICEOPS_PLAN to apply" >&2
			return 1
		fi
		# iceops refuses a plan whose tables' effective policy changed since;
		# then run this job again with ICEOPS_APPLY_MODE=replan.
		apply_logged -input=false -auto-approve "$ICEOPS_PLAN"
		;;
	replan)
		local rc=0
		iceops plan -input=false -detailed-exitcode -out="$ICEOPS_PLAN" || rc=$?
		case $rc in
		0) echo "iceops-ci: every table is in policy; nothing to apply" | tee "$ICEOPS_APPLY_LOG" ;;
		2) apply_logged -input=false -auto-approve "$ICEOPS_PLAN" ;;
		*) return "$rc" ;;
		esac
		;;
	*)
		echo "iceops-ci: ICEOPS_APPLY_MODE must be artifact or replan" >&2
		return 1
		;;
	esac
}

case ${1:-} in
check | plan | comment | apply) "cmd_$1" ;;
*)
	echo "usage: iceops-ci.sh check|plan|comment|apply" >&2
	exit 64
	;;
esac
