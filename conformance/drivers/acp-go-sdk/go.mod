module github.com/agentconform/agentconform/conformance/drivers/acp-go-sdk

go 1.22

require github.com/coder/acp-go-sdk v0.13.0
