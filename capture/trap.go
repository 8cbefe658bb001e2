package capture

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"
)

// trap is a fake HTTP proxy on loopback. The CLI's proxy variables point
// at it, so any proxy-aware client that tries to reach the internet
// arrives here instead: the trap records where it wanted to go, answers
// 403 and hangs up. Nothing is ever forwarded.
type trap struct {
	ln  net.Listener
	url string

	mu   sync.Mutex
	seen []string
	wg   sync.WaitGroup
}

func startTrap() (*trap, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("capture: starting the proxy trap: %w", err)
	}
	t := &trap{ln: ln, url: "http://" + ln.Addr().String()}
	t.wg.Add(1)
	go t.serve()
	return t, nil
}

func (t *trap) serve() {
	defer t.wg.Done()
	for {
		c, err := t.ln.Accept()
		if err != nil {
			return
		}
		t.wg.Add(1)
		go func() {
			defer t.wg.Done()
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			line, _ := bufio.NewReader(c).ReadString('\n')
			line = strings.TrimSpace(line)
			if line == "" {
				line = "(a connection that sent no request line)"
			}
			t.mu.Lock()
			t.seen = append(t.seen, "proxy trap: "+line)
			t.mu.Unlock()
			_, _ = c.Write([]byte("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
		}()
	}
}

// hits returns the request lines that reached the trap.
func (t *trap) hits() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.seen...)
}

func (t *trap) close() {
	t.ln.Close()
	t.wg.Wait()
}
