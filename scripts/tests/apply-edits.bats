#!/usr/bin/env bats
# scripts/steps/apply-edits on a few lines of fs/eventpoll.c (data/apply-edits/):
# each directive, and each way an edit stops

load helpers

setup() {
	E=$DATA/apply-edits
	tree=$BATS_TEST_TMPDIR/tree
	cp -r "$E/tree" "$tree"
}

edit() { run "$SCRIPTS/steps/apply-edits" "$tree" "$E/$1"; }

# stops EDIT LINE MESSAGE: the edit stops, naming its file and line, and
# leaves the tree as it was
stops() {
	edit "$1"
	[ "$status" -ne 0 ]
	printf '%s\n' "$output"
	[ "$output" = "apply-edits: $E/$1:$2: $3" ]
	diff -r "$E/tree" "$tree"
}

@test "apply-edits: file, find, before, replace, after, delete and create" {
	edit all.edit
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	diff -r "$E/expected" "$tree"
}

@test "apply-edits: a missing anchor stops, naming the edit's file and line" {
	stops absent.edit 2 "'^no anchor at all' matches 0 lines of fs/eventpoll.c, not one"
}

@test "apply-edits: an anchor missing after the one before it stops" {
	stops missing.edit 3 "'^int no_such_function' not found in fs/eventpoll.c after line 2"
}

@test "apply-edits: an ambiguous anchor stops" {
	stops ambiguous.edit 3 "'return 0;' matches 2 lines of fs/eventpoll.c, not one"
}

@test "apply-edits: an anchor that moved above the one before it stops" {
	stops moved.edit 3 "'^static int ep_modify' not found in fs/eventpoll.c after line 12"
}

@test "apply-edits: create over an existing file stops" {
	stops create-exists.edit 2 "fs/eventpoll.c exists"
}

@test "apply-edits: a delete past the end, a directive before file, an unknown one" {
	stops delete-past-end.edit 3 "'delete 9' runs past the end of fs/eventpoll.c"
	stops no-file.edit 1 "'find' before any 'file'"
	stops unknown.edit 3 "unknown directive 'insert'"
}

@test "apply-edits: an edit that stops halfway writes nothing of it" {
	stops partial.edit 5 "'^int no_such_function' not found in fs/eventpoll.c after line 13"
}
