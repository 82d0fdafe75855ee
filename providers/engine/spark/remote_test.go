package spark

import (
	"strings"
	"testing"
)

func TestRedactRemote(t *testing.T) {
	remote := "sc://spark.example:15002/;token=s3cr3t-tok;use_ssl=true"
	if got := RedactRemote(remote); strings.Contains(got, "s3cr3t-tok") || got != "sc://spark.example:15002/;token=(sensitive);use_ssl=true" {
		t.Errorf("RedactRemote = %s", got)
	}
	if got := RedactRemote("sc://h:15002"); got != "sc://h:15002" {
		t.Errorf("RedactRemote without a token = %s", got)
	}
	if err := CheckRemote("sc://h:15002"); err != nil {
		t.Errorf("CheckRemote(sc://h:15002) = %v", err)
	}
	if err := CheckRemote("http://h/;token=s3cr3t-tok"); err == nil || strings.Contains(err.Error(), "s3cr3t-tok") {
		t.Errorf("CheckRemote(http://...) = %v", err)
	}
}
