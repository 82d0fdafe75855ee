package compaction

// RowStrings is for the external test package (compaction_test), which may
// import providers (the apply path) without an import cycle.
var RowStrings = rowStrings
