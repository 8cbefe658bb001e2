package fakecli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// session is one stored session (a Claude or Gemini session, a Codex
// thread): which transcript it replays and which process part comes next,
// so that a resumed process continues where the last one stopped.
type session struct {
	CLI string `json:"cli"`
	ID  string `json:"id"`
	// Transcript is the reference transcriptRef made.
	Transcript string `json:"transcript"`
	// Next is the index of the process part the next resume replays.
	Next int `json:"next"`
	// Cwd is the working directory of the process that created the
	// session (Codex --last, Gemini latest and Claude --continue look only
	// at the sessions of the current directory).
	Cwd string `json:"cwd"`
	// Created and Updated are Unix nanoseconds.
	Created int64 `json:"created"`
	Updated int64 `json:"updated"`
	// Title is the first prompt, for Gemini's --list-sessions.
	Title string `json:"title,omitempty"`
}

// store is the session store: one JSON file per session in a directory.
type store struct {
	dir string
}

// openStore opens the store AGENTCONFORM_SESSIONS names, or one under the
// user cache directory.
func openStore(env func(string) string) (*store, error) {
	dir := env(EnvSessions)
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return nil, fmt.Errorf("no session store: set %s (%w)", EnvSessions, err)
		}
		dir = filepath.Join(cache, "agentconform", "sessions")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("session store %s: %w", dir, err)
	}
	return &store{dir: dir}, nil
}

// safeID reports whether id can name a session file: 1 to 200 of
// A-Z a-z 0-9 . _ - (checked by hand: a regexp compiled at start-up was a
// tenth of the fake's start).
func safeID(id string) bool {
	if len(id) == 0 || len(id) > 200 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func (s *store) path(cli, id string) (string, bool) {
	if !safeID(id) || strings.HasPrefix(id, ".") {
		return "", false
	}
	return filepath.Join(s.dir, cli+"-"+id+".json"), true
}

// get returns the session cli/id, or nil when there is none.
func (s *store) get(cli, id string) (*session, error) {
	p, ok := s.path(cli, id)
	if !ok {
		return nil, nil
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading session %s: %w", id, err)
	}
	var ses session
	if err := json.Unmarshal(b, &ses); err != nil {
		return nil, fmt.Errorf("session file %s: %w", p, err)
	}
	return &ses, nil
}

// put writes a session atomically (temp file and rename), so concurrent
// fakes never read half a record.
func (s *store) put(ses *session) error {
	p, ok := s.path(ses.CLI, ses.ID)
	if !ok {
		return fmt.Errorf("session id %q cannot be stored", ses.ID)
	}
	now := time.Now().UnixNano()
	if ses.Created == 0 {
		ses.Created = now
	}
	ses.Updated = now
	b, err := json.Marshal(ses)
	if err != nil {
		return fmt.Errorf("encoding session: %w", err)
	}
	tmp, err := os.CreateTemp(s.dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("writing session: %w", err)
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("writing session: %w", err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing session: %w", err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing session: %w", err)
	}
	return nil
}

// list returns the sessions of cli, oldest first; with cwd set, only those
// created in that directory.
func (s *store) list(cli, cwd string) ([]*session, error) {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("listing sessions: %w", err)
	}
	var out []*session
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, cli+"-") || !strings.HasSuffix(name, ".json") {
			continue
		}
		ses, err := s.get(cli, strings.TrimSuffix(strings.TrimPrefix(name, cli+"-"), ".json"))
		if err != nil || ses == nil {
			continue // a file another process is replacing, or garbage
		}
		if cwd != "" && ses.Cwd != cwd {
			continue
		}
		out = append(out, ses)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Created != out[j].Created {
			return out[i].Created < out[j].Created
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// latest returns the most recently used session of cli in cwd ("" for
// any directory), or nil.
func (s *store) latest(cli, cwd string) (*session, error) {
	all, err := s.list(cli, cwd)
	if err != nil || len(all) == 0 {
		return nil, err
	}
	best := all[0]
	for _, ses := range all[1:] {
		if ses.Updated > best.Updated || (ses.Updated == best.Updated && ses.Created > best.Created) {
			best = ses
		}
	}
	return best, nil
}

// newUUID draws a version 4 UUID from r: deterministic for a seed, so
// replays are reproducible.
func newUUID(r *rand.Rand) string {
	var b [16]byte
	for i := 0; i < 16; i += 8 {
		x := r.Uint64()
		for j := 0; j < 8; j++ {
			b[i+j] = byte(x >> (8 * j))
		}
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// isUUID reports whether s is a UUID in its usual text form (8-4-4-4-12
// hexadecimal digits).
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
			continue
		}
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// cwd is the working directory sessions are filed under.
func cwd() string {
	d, err := os.Getwd()
	if err != nil {
		return ""
	}
	return d
}

// sessionPart picks the process part a session's next process replays:
// the next one, or the last again when the transcript has no more.
func sessionPart(ses *session, parts int) int {
	if ses.Next < parts {
		return ses.Next
	}
	return parts - 1
}

// recorded returns a session for id when the transcript ref names was
// itself recorded as session id (a fixture of a resumed session, such as
// claude/compaction, whose argv resumes it), so that the recorded
// invocation replays as recorded; nil otherwise. keys are the event fields
// that carry the id.
func recorded(cli, ref, id, here string, keys ...string) *session {
	t, err := loadRef(cli, ref)
	if err != nil || id == "" || recordedSessionID(t, keys...) != id {
		return nil
	}
	return &session{CLI: cli, ID: id, Transcript: ref, Cwd: here}
}
