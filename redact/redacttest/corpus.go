// Package redacttest holds a corpus of fake credentials placed in
// realistic stream-json lines of Claude Code, Codex and Gemini CLI, for
// the tests of redaction (package redact, the recorder, agentconform
// record).
//
// Every credential has the shape of a real one, as the public rule sets of
// secret scanners describe it, and is obviously fake (FAKE, EXAMPLE,
// 0123456789abcdef, deadbeef). None is written out whole in this file: each
// is assembled from parts when the corpus is built, so that a scanner of
// the repository (push protection and the like) finds nothing to flag.
package redacttest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// Case is one kind of credential in the lines that carry it.
type Case struct {
	// Kind names the credential ("stripe-secret-key").
	Kind string
	// Lines are stdout lines of a CLI, one JSON object each, in order.
	Lines []string
	// Secrets must not be in the redacted lines (the credential, and
	// for one split or encoded, its parts or its encoding).
	Secrets []string
}

// pad repeats unit after prefix up to exactly n bytes.
func pad(prefix, unit string, n int) string {
	s := prefix
	for len(s) < n {
		s += unit
	}
	return s[:n]
}

func b64url(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// marshal encodes v as the CLIs do (JSON.stringify, serde_json): '<',
// '>' and '&' as they are, not escaped as Go escapes them for HTML.
func marshal(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

const session = "5f3c9a1e-0b7d-4e2a-9c8f-1a2b3c4d5e6f"

// claudeText is an assistant message with one text block.
func claudeText(text string) string {
	return marshal(map[string]any{"type": "assistant", "message": map[string]any{"id": "msg_01FAKE", "type": "message", "role": "assistant",
		"model": "claude-sonnet-4-5", "content": []any{map[string]any{"type": "text", "text": text}}, "stop_reason": nil,
		"usage": map[string]any{"input_tokens": 12, "output_tokens": 34}}, "parent_tool_use_id": nil, "session_id": session, "uuid": "u-1"})
}

// claudeBash is an assistant message that runs a command.
func claudeBash(command string) string {
	return marshal(map[string]any{"type": "assistant", "message": map[string]any{"id": "msg_01FAKE", "type": "message", "role": "assistant",
		"model": "claude-sonnet-4-5", "content": []any{map[string]any{"type": "tool_use", "id": "toolu_01FAKE", "name": "Bash",
			"input": map[string]any{"command": command, "description": "Run the command"}}}}, "parent_tool_use_id": nil, "session_id": session, "uuid": "u-2"})
}

// claudeToolResult is the user message carrying a tool's output, as the
// stream shows it (content and tool_use_result).
func claudeToolResult(output string) string {
	return marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": []any{map[string]any{
		"tool_use_id": "toolu_01FAKE", "type": "tool_result", "content": output, "is_error": false}}},
		"parent_tool_use_id": nil, "session_id": session, "uuid": "u-3",
		"tool_use_result": map[string]any{"stdout": output, "stderr": "", "interrupted": false, "isImage": false}})
}

// claudeDelta is a streamed text delta (--include-partial-messages).
func claudeDelta(text string) string {
	return marshal(map[string]any{"type": "stream_event", "event": map[string]any{"type": "content_block_delta", "index": 0,
		"delta": map[string]any{"type": "text_delta", "text": text}}, "session_id": session, "parent_tool_use_id": nil, "uuid": "u-4"})
}

// codexCommand is Codex's completed command with its output.
func codexCommand(command, output string) string {
	return marshal(map[string]any{"type": "item.completed", "item": map[string]any{"id": "item_3", "type": "command_execution",
		"command": "bash -lc '" + command + "'", "aggregated_output": output, "exit_code": 0, "status": "completed"}})
}

// codexMessage is Codex's agent message.
func codexMessage(text string) string {
	return marshal(map[string]any{"type": "item.completed", "item": map[string]any{"id": "item_4", "type": "agent_message", "text": text}})
}

// geminiToolResult is Gemini CLI's tool result.
func geminiToolResult(output string) string {
	return marshal(map[string]any{"type": "tool_result", "timestamp": "2025-11-24T10:00:00.000Z", "tool_id": "run_shell_command-1",
		"status": "success", "output": output})
}

// geminiMessage is Gemini CLI's streamed assistant text.
func geminiMessage(text string) string {
	return marshal(map[string]any{"type": "message", "timestamp": "2025-11-24T10:00:01.000Z", "role": "assistant", "content": text, "delta": true})
}

// pemBody is the base64 body of a fake key: it decodes to text saying so.
func pemBody(lines int) string {
	body := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("FAKE KEY for agentconform tests, not a real key. ", lines)))
	var b strings.Builder
	for i := 0; i < len(body); i += 64 {
		b.WriteString(body[i:min(i+64, len(body))])
		b.WriteByte('\n')
	}
	return b.String()
}

// Corpus returns the 44 kinds of credential, each in lines as a CLI would
// print them. Some are split or hidden on purpose: one across two
// streamed text deltas, two base64-encoded, URL passwords JSON-escaped.
func Corpus() []Case {
	var cs []Case
	add := func(kind string, secrets []string, lines ...string) {
		cs = append(cs, Case{Kind: kind, Lines: lines, Secrets: secrets})
	}
	one := func(kind, secret string, lines ...string) { add(kind, []string{secret}, lines...) }

	// Keys the redactor knew by shape or context before.
	antKey := "sk-" + "ant-" + "api03-" + pad("FAKE_example_", "0123456789", 95) + "AA"
	one("anthropic-api-key", antKey, claudeToolResult("ANTHROPIC_BASE_URL=https://api.example.test\nanthropic key in use: "+antKey+"\n"))
	antOAuth := "sk-" + "ant-" + "oat01-" + pad("FAKEoauthEXAMPLE", "-abc_", 80)
	one("anthropic-oauth-token", antOAuth, claudeText("Your OAuth token is "+antOAuth+" (keep it private)."))
	oaiProj := "sk-" + "proj-" + pad("FAKEexampleProjKey", "0123456789", 120)
	one("openai-project-key", oaiProj, codexCommand("cat ~/.codex/auth.json", `{"OPENAI_API_KEY": null, "note": "use `+oaiProj+`"}`+"\n"))
	oaiSvc := "sk-" + "svcacct-" + pad("FAKEexampleSvcAcct", "AbCd1234", 100)
	one("openai-service-account-key", oaiSvc, codexMessage("The service account key "+oaiSvc+" is set in CI."))
	oaiOld := "sk-" + pad("FAKEexampleLegacyT3BlbkFJ", "x9Y8", 48)
	one("openai-legacy-key", oaiOld, geminiToolResult("OPENAI_KEY "+oaiOld+"\n"))
	google := "AI" + "za" + pad("SyFAKE-example_", "0123456789", 35)
	one("google-api-key", google, geminiToolResult("GET https://generativelanguage.googleapis.com/v1beta/models?key="+google+" 200"))
	ghp := "gh" + "p_" + pad("FAKEexample", "0123456789", 36)
	one("github-classic-token", ghp, claudeBash("git clone https://x-access-token:"+ghp+"@github.com/example/repo.git"))
	gho := "gh" + "o_" + pad("FAKEoauth", "AbCdEf123", 36)
	one("github-oauth-token", gho, codexCommand("gh auth status -t", "github.com\n  ✓ Logged in as example\n  ✓ Token: "+gho+"\n"))
	ghFine := "github" + "_pat_" + pad("11FAKE0000000000000000_", "ExampleFineGrained0123", 82)
	one("github-fine-grained-token", ghFine, claudeText("I used "+ghFine+" to call the API."))
	akia := "AK" + "IA" + "FAKE" + "EXAMPLE12345"
	one("aws-access-key-id", akia, claudeToolResult("[default]\naws_access_key_id = "+akia+"\nregion = eu-west-1\n"))
	dbPass := "Fake" + "Passw0rd-" + "EXAMPLE"
	one("url-password", dbPass, codexCommand("printenv DATABASE_URL", "postgres://app_user:"+dbPass+"@db.internal.example:5432/app\n"))
	bearer := "FAKEbearer" + pad("", "0123456789abcdef", 30)
	one("bearer-header", bearer, claudeBash(`curl -s -H "Authorization: Bearer `+bearer+`" https://api.example.test/v1/me`))
	basic := base64.StdEncoding.EncodeToString([]byte("fake-user:" + "FakePassword123"))
	one("basic-header", basic, geminiToolResult("> GET / HTTP/1.1\n> Authorization: Basic "+basic+"\n< HTTP/1.1 200 OK\n"))
	clientSecret := "FAKE" + "-client-secret-" + "0123456789"
	one("json-secret-field", clientSecret, claudeToolResult(`{"client_id": "fake-app", "client_secret": "`+clientSecret+`", "redirect_uri": "http://localhost"}`+"\n"))
	envPass := "Fake" + "EnvPass" + "w0rd2025"
	one("env-assignment", envPass, claudeToolResult("NODE_ENV=development\nDB_PASSWORD="+envPass+"\nPORT=3000\n"))
	jsonPass := "fake" + "-hunter2-" + "EXAMPLE"
	one("keyword-password", jsonPass, claudeBash(`psql "host=db user=app password=`+jsonPass+`"`))

	// Kinds that came through unredacted before.
	awsSecret := pad("FAKE/EXAMPLE+", "wJalrXUtnFEMIK7MDENG", 40)
	one("aws-secret-access-key", awsSecret, claudeToolResult("[default]\naws_access_key_id = "+akia+"\naws_secret_access_key = "+awsSecret+"\n"))
	jwt := b64url(`{"alg":"HS256","typ":"JWT"}`) + "." + b64url(`{"sub":"fake-user","note":"FAKE token for tests","iat":1700000000}`) + "." + b64url("FAKE signature, not a real one")
	one("jwt", jwt, codexCommand("cat session.txt", "session cookie: sid="+jwt+"\n"))
	rsaBody := pemBody(12)
	rsa := "-----BEGIN " + "RSA PRIVATE KEY-----\n" + rsaBody + "-----END " + "RSA PRIVATE KEY-----\n"
	add("pem-private-key", pemSecrets(rsaBody), claudeToolResult(rsa))
	saBody := pemBody(16)
	sa := map[string]any{"type": "service_account", "project_id": "fake-project-000", "private_key_id": pad("", "0123456789abcdef", 40),
		"private_key":  "-----BEGIN " + "PRIVATE KEY-----\n" + saBody + "-----END " + "PRIVATE KEY-----\n",
		"client_email": "fake@fake-project-000.iam.gserviceaccount.com", "client_id": "000000000000000000000"}
	saJSON, _ := json.MarshalIndent(sa, "", "  ")
	// head -c shows the file cut in the middle of the key: no closing
	// quote, no END line. Five lines of the body (64 characters and a \n
	// escape each) are whole in what it shows.
	js := string(saJSON)
	at := strings.Index(js, "PRIVATE KEY-----") + len("PRIVATE KEY-----")
	add("pem-in-service-account-json", pemSecrets(saBody[:5*65]), codexCommand("head -c 1200 sa.json", js[:at+400]))
	slackBot := "xox" + "b-" + "000000000000-0000000000000-" + "FAKEexampleTOKENnotREAL0"
	one("slack-bot-token", slackBot, codexMessage("Posting with the bot token "+slackBot+" now."))
	slackHook := "T0000FAKE/" + "B0000FAKE/" + "FAKEexample0000000000000"
	one("slack-webhook-url", slackHook, claudeBash(`curl -X POST -d '{"text":"deploy done"}' https://hooks.`+"slack.com/services/"+slackHook))
	stripe := "sk_" + "live_" + "51FAKE" + pad("EXAMPLE", "0000000000", 60)
	one("stripe-live-key", stripe, claudeToolResult("STRIPE_KEY "+stripe+"\n"))
	npm := "np" + "m_" + pad("FAKEexample", "0123456789", 36)
	one("npm-token", npm, claudeText("Publish from CI with the automation token "+npm+" (it bypasses 2FA)."))
	hf := "h" + "f_" + pad("FAKEexampleTokenNotReal", "AbCdEfGh", 34)
	one("huggingface-token", hf, geminiToolResult("$ huggingface-cli whoami --token "+hf+"\nfake-user\n"))
	gitlab := "gl" + "pat-" + "FAKE-example_0123456"
	one("gitlab-token", gitlab, codexCommand("glab auth status", "gitlab.example.com\n  ✓ Logged in as fake-user\n  ✓ Token found: "+gitlab+"\n"))
	twilio := "S" + "K" + pad("", "0123456789abcdef", 32)
	one("twilio-api-key", twilio, claudeText("The Twilio API key is "+twilio+"."))
	sendgrid := "S" + "G." + pad("FAKEexample", "0123456789", 22) + "." + pad("FAKEexampleSendGridSecret", "AbCd0123", 43)
	one("sendgrid-key", sendgrid, geminiToolResult("sendgrid: using "+sendgrid+"\n"))
	do := "do" + "p_v1_" + pad("", "0123456789abcdef", 64)
	one("digitalocean-token", do, codexCommand("doctl auth list", "default ("+do+") (current)\n"))
	mailgun := "key" + "-" + pad("", "deadbeef00000000", 32)
	one("mailgun-key", mailgun, claudeBash("curl -s --user 'api:"+mailgun+"' https://api.mailgun.net/v3/domains"))
	shopify := "shp" + "at_" + pad("", "deadbeef", 32)
	one("shopify-token", shopify, codexMessage("Use the Admin API access token "+shopify+" in the X-Shopify-Access-Token header."))
	pypi := "py" + "pi-" + "AgEIcHlwaS5vcmc" + pad("CJFAKEexample", "0123456789-_abcDEF", 80)
	one("pypi-token", pypi, claudeToolResult("[pypi]\n  username = __token__\n  password\t"+pypi+"\n"))
	azKey := pad("FAKEexample+", "AbCdEf0123456789/", 86) + "=="
	azure := "DefaultEndpointsProtocol=https;AccountName=fakeaccount;AccountKey=" + azKey + ";EndpointSuffix=core.windows.net"
	one("azure-storage-connection-string", azKey, geminiToolResult("AZURE_STORAGE_CONNECTION_STRING is "+azure+"\n"))

	// A key split across two consecutive streamed text deltas: neither
	// part has the shape of a key.
	split := "gh" + "p_" + pad("FAKEsplit", "0123456789", 36)
	add("key-split-across-text-deltas", []string{split, split[:16], split[16:]},
		claudeDelta("Sure. Set GH_TOKEN to "), claudeDelta(split[:16]), claudeDelta(split[16:]+" and run the script."))
	// A base64-encoded secret: the .env of a Kubernetes secret.
	encoded := base64.StdEncoding.EncodeToString([]byte("STRIPE_KEY=" + stripe + "\nLOG_LEVEL=debug\n"))
	one("base64-encoded-secret", encoded, codexCommand("kubectl get secret app -o jsonpath='{.data.env}'", encoded+"\n"))

	// The password of a URL's userinfo (RFC 3986, 3.2.1): any of the
	// unreserved characters, the sub-delims, ':' and percent-escapes,
	// which no shape finds and an e-mail address stops at.
	// Its first and last five bytes must go too: an e-mail address's
	// rule took the end of such a password, with the host, and left the
	// start.
	urlPass := func(kind, pass string, lines ...string) {
		add(kind, []string{pass, pass[:5], pass[len(pass)-5:]}, lines...)
	}
	tildeBang := "Fake~Pass!" + "w0rd-EXAMPLE"
	urlPass("url-password-tilde-bang", tildeBang, claudeBash("git clone https://deploy:"+tildeBang+"@git.example.test/team/app.git"))
	subDelims := "Fake$&'()*+,;=" + "Passw0rd-EXAMPLE"
	urlPass("url-password-sub-delims", subDelims, codexCommand("printenv REDIS_URL", "rediss://default:"+subDelims+"@cache.example.test:6380/0\n"))
	percent := "Fake%21%40%23" + "Pass%2Fw0rd%3AEXAMPLE"
	urlPass("url-password-percent-escapes", percent, geminiToolResult("AMQP_URL=amqps://svc:"+percent+"@mq.example.test/vhost\n"))
	colons := "Fake:Pass:" + "w0rd~EXAMPLE"
	urlPass("url-password-with-colons", colons, claudeToolResult("MONGO_URI=mongodb+srv://admin:"+colons+"@cluster0.example.test/app?retryWrites=true\n"))
	noUser := "FakeTokenOnly~" + "EXAMPLE!2025"
	urlPass("url-password-without-user", noUser, codexMessage("Push with https://:"+noUser+"@git.example.test/team/app.git, then tag."))
	prose := "Fake!Tok~en(" + "2025)EXAMPLE"
	urlPass("url-password-in-prose", prose, geminiMessage("Log in at https://ci-bot:"+prose+"@registry.example.test/v2/ and push the image."))
	unicode := "Fake~Päss" + "wörd!EXAMPLE"
	urlPass("url-password-non-ascii", unicode, claudeText("The feed is https://reader:"+unicode+"@feeds.example.test/private.xml"))
	// As Go's encoder writes it ('&' as \u0026), with slashes escaped as
	// PHP's does, and non-ASCII as Python's json.dumps does: the secret
	// is in the decoded strings, its escaped spelling in the raw line.
	escaped := "Fake&Pass~" + "wörd!EXAMPLE"
	escapedRaw := `Fake\u0026Pass~` + `w\u00f6rd!EXAMPLE`
	add("url-password-json-escaped", []string{escaped, escaped[:5], escaped[len(escaped)-5:], escapedRaw, escapedRaw[:5]},
		`{"type":"item.completed","item":{"id":"item_5","type":"command_execution","command":"bash -lc 'git remote -v'",`+
			`"aggregated_output":"origin\thttps:\/\/deploy:`+escapedRaw+`@git.example.test\/team\/app.git (fetch)\n","exit_code":0,"status":"completed"}}`)
	encodedURL := base64.StdEncoding.EncodeToString([]byte("DATABASE_URL=postgres://app:" + tildeBang + "@db.example.test:5432/app\nLOG_LEVEL=debug\n"))
	one("base64-encoded-url-password", encodedURL, codexCommand("kubectl get secret db -o jsonpath='{.data.env}'", encodedURL+"\n"))

	if len(cs) != 44 {
		panic(fmt.Sprintf("redacttest: %d cases, want 44", len(cs)))
	}
	return cs
}

// pemSecrets are the lines of a PEM body: none may survive.
func pemSecrets(body string) []string {
	return strings.Fields(body)
}

// Survivors returns the secrets that text still holds: as they are, or in
// a string of the JSON on one of its lines (where escapes hide them from
// a plain search), also in a string that is itself JSON (a transcript's
// recorded line).
func Survivors(text string, secrets []string) []string {
	var strs []string
	for _, line := range strings.Split(text, "\n") {
		strs = appendStrings(strs, line, 0)
	}
	var out []string
	for _, s := range secrets {
		found := strings.Contains(text, s)
		for _, x := range strs {
			if found {
				break
			}
			found = strings.Contains(x, s)
		}
		if found {
			out = append(out, s)
		}
	}
	return out
}

// appendStrings appends the strings of the JSON document doc, and of the
// documents they hold, to strs.
func appendStrings(strs []string, doc string, depth int) []string {
	doc = strings.TrimSpace(doc)
	if depth > 3 || doc == "" || doc[0] != '{' && doc[0] != '[' {
		return strs
	}
	var v any
	if json.Unmarshal([]byte(doc), &v) != nil {
		return strs
	}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case string:
			strs = append(strs, x)
			strs = appendStrings(strs, x, depth+1)
		}
	}
	walk(v)
	return strs
}
