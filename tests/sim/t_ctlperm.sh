#!/bin/bash
# Who may use the control socket (issue 12): smd asks the kernel who each
# client is (SO_PEERCRED, SO_PEERGROUPS). With control_group = users the
# socket is root:users, mode 0660, so user nobody cannot even connect; once
# an administrator opens the socket to everyone (chmod 0666, as an ACL
# would for a monitoring user) nobody reads status and check-routes but is
# refused resweep and sm-enable (and smd logs it), while a user whose
# primary or supplementary group is users may resweep. Needs root, to act
# as other users (setpriv); skipped otherwise.
. "$(dirname "$0")/common.sh"
SMCTL=${SMCTL:-$top/ctl/smctl}
[ "$(id -u)" -eq 0 ] || { echo "not root: cannot act as other users, skipped"; exit 77; }
command -v setpriv >/dev/null || { echo "no setpriv, skipped"; exit 77; }
getent group users >/dev/null || { echo "no group users, skipped"; exit 77; }
tmp=$(mktemp -d)
cleanup_smd() { [ -n "$smd_pid" ] && kill -KILL "$smd_pid" 2>/dev/null; rm -rf "$tmp"; }
trap 'cleanup_smd; sim_stop' EXIT
chmod 755 "$tmp"
cd "$tmp" || exit 1
$GEN line 2 -o net 2>/dev/null
users=$(getent group users | cut -d: -f3)
# as UID GID [GROUPS] CMD...: run CMD as that user
as() {
	local uid=$1 gid=$2 groups=$3

	shift 3
	if [ -n "$groups" ]; then
		setpriv --reuid="$uid" --regid="$gid" --groups="$groups" "$@"
	else
		setpriv --reuid="$uid" --regid="$gid" --clear-groups "$@"
	fi
}
nobody() { as 65534 65534 "" "$SMCTL" --socket "$tmp/control" "$@"; }

sim_start net >/dev/null 2>&1
printf 'sweep_interval = 0\ncontrol_group = users\n' >conf
smd_start conf "$tmp/db" "$tmp/out"
check wait_for "$tmp/out" "subnet UP" 1
check test "$(stat -c '%a %U %G' control)" = "660 root users"
# nobody cannot connect at all
rc=0; nobody status >e1 2>&1 || rc=$?
check test "$rc" -eq 1
check grep -q "Permission denied" e1

# The socket opened to all: read-only commands for anyone, changes not
chmod 666 control
check nobody status
check nobody check-routes
rc=0; nobody resweep >e2 2>&1 || rc=$?
cat e2
check test "$rc" -eq 1
check grep -q "permission denied: resweep changes the SM; it is for root and group users" e2
rc=0; nobody sm-enable >e3 2>&1 || rc=$?
check test "$rc" -eq 1
check grep -q "permission denied: sm-enable" e3
check grep -q "control: resweep refused to uid 65534" out
# users by primary group, and by a supplementary group
check as 65534 "$users" "" "$SMCTL" --socket "$tmp/control" resweep
check as 65534 65534 "$users" "$SMCTL" --socket "$tmp/control" resweep
# root, always
check "$SMCTL" --socket "$tmp/control" resweep
check smd_stop
finish
