package main

// fixtureCmds build real tables for the scripts (filled in as providers
// land).
func fixtureCmds() map[string]scriptCmd { return map[string]scriptCmd{} }
