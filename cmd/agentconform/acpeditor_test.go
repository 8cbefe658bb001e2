package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestRunProfileACPUsage: --profile acp needs an agent command, and not
// one the fakes stand in for.
func TestRunProfileACPUsage(t *testing.T) {
	for _, args := range [][]string{
		{"--profile", "acp"},
		{"--profile", "acp", "--adapter", "gemini --acp"},
		{"--profile", "acp", "--adapter", "/usr/local/bin/claude -p"},
	} {
		var out, errb bytes.Buffer
		if code := runRun(context.Background(), args, strings.NewReader(""), &out, &errb); code != exitUsage {
			t.Errorf("%v: exit %d, stderr %s", args, code, errb.String())
		}
	}
	if fakeCLIOf("npx @zed-industries/claude-agent-acp") != "" || fakeCLIOf("'gemini' --acp") != "gemini" {
		t.Error("fakeCLIOf")
	}
}

// TestACPEditorUsage: acp-editor needs --agent; with one it says hello
// with the acp protocol, and a close ends it.
func TestACPEditorUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := runACPEditor(context.Background(), nil, strings.NewReader(""), &out, &errb); code != exitUsage {
		t.Errorf("no --agent: exit %d", code)
	}
	out.Reset()
	code := runACPEditor(context.Background(), []string{"--agent", "npx @zed-industries/claude-agent-acp"}, strings.NewReader(`{"op":"close"}`+"\n"), &out, &errb)
	if code != 0 || !strings.Contains(out.String(), `"protocol":"acp"`) || !strings.Contains(out.String(), `"agents":["claude"]`) || !strings.Contains(out.String(), `"agentconform":"end","ok":true`) {
		t.Errorf("exit %d, output %s, stderr %s", code, out.String(), errb.String())
	}
}
