// Package examples holds real icewright configurations, one per directory;
// examples_test.go loads every one of them with the config package.
package examples
