package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"
)

// browser is a headless Chromium driven over the DevTools protocol on a
// pipe (--remote-debugging-pipe: the browser reads NUL-terminated JSON
// commands on fd 3 and writes replies and events on fd 4), so a test needs
// no WebSocket client and no open port. It drives one page (tab).

type browser struct {
	cmd     *exec.Cmd
	w       *os.File
	done    chan struct{}
	stderr  bytes.Buffer
	mu      sync.Mutex
	nextID  int
	waiting map[int]chan cdpReply
	session string
}

type cdpReply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// chromium returns the path of Debian's chromium, or skips the test.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium not installed (apt-get install chromium; .ci/run installs it): skipping the cluster page test")
	return ""
}

// startBrowser starts headless Chromium with one page open at url; it is
// stopped at the end of the test.
func startBrowser(t *testing.T, bin, url string) *browser {
	t.Helper()
	toBrowserR, toBrowserW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	fromBrowserR, fromBrowserW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	b := &browser{w: toBrowserW, done: make(chan struct{}), waiting: map[int]chan cdpReply{}}
	b.cmd = exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
		"--remote-debugging-pipe", "--user-data-dir="+t.TempDir(), "--window-size=1600,1000", "about:blank")
	b.cmd.ExtraFiles = []*os.File{toBrowserR, fromBrowserW} // fds 3 and 4
	b.cmd.Stderr = &lockedWriter{w: &b.stderr}
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its helpers go with it
	if err := b.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	_ = toBrowserR.Close()
	_ = fromBrowserW.Close()
	go b.read(fromBrowserR)
	t.Cleanup(b.close)

	var target struct {
		TargetID string `json:"targetId"`
	}
	b.call(t, "Target.createTarget", map[string]any{"url": "about:blank"}, &target)
	var att struct {
		SessionID string `json:"sessionId"`
	}
	b.call(t, "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att)
	b.session = att.SessionID
	b.call(t, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 1600, "height": 1000,
		"deviceScaleFactor": 1, "mobile": false}, nil)
	b.call(t, "Page.navigate", map[string]any{"url": url}, nil)
	return b
}

// read dispatches the browser's replies to their callers (events are
// dropped).
func (b *browser) read(r *os.File) {
	defer close(b.done)
	br := bufio.NewReader(r)
	for {
		msg, err := br.ReadBytes(0)
		if err != nil {
			return
		}
		var m struct {
			ID *int `json:"id"`
			cdpReply
		}
		if json.Unmarshal(msg[:len(msg)-1], &m) != nil || m.ID == nil {
			continue
		}
		b.mu.Lock()
		ch := b.waiting[*m.ID]
		delete(b.waiting, *m.ID)
		b.mu.Unlock()
		if ch != nil {
			ch <- m.cdpReply
		}
	}
}

// call sends a DevTools command (to the page once attached) and decodes
// its result into out (nil: ignored).
func (b *browser) call(t *testing.T, method string, params map[string]any, out any) {
	t.Helper()
	if err := b.try(method, params, out); err != nil {
		t.Fatalf("chromium %s: %v\n%s", method, err, b.log())
	}
}

func (b *browser) try(method string, params map[string]any, out any) error {
	b.mu.Lock()
	b.nextID++
	id := b.nextID
	ch := make(chan cdpReply, 1)
	b.waiting[id] = ch
	b.mu.Unlock()
	req := map[string]any{"id": id, "method": method, "params": params}
	if b.session != "" && method[:7] != "Target." {
		req["sessionId"] = b.session
	}
	msg, err := json.Marshal(req)
	if err != nil {
		return err
	}
	if _, err := b.w.Write(append(msg, 0)); err != nil {
		return err
	}
	select {
	case rep := <-ch:
		if rep.Error != nil {
			return errors.New(rep.Error.Message)
		}
		if out != nil {
			return json.Unmarshal(rep.Result, out)
		}
		return nil
	case <-b.done:
		return errors.New("chromium exited")
	case <-time.After(20 * time.Second):
		return errors.New("no reply within 20s")
	}
}

// eval evaluates a JavaScript expression in the page and decodes its
// (JSON-able) value into out.
func (b *browser) eval(t *testing.T, expr string, out any) {
	t.Helper()
	if err := b.tryEval(expr, out); err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
}

func (b *browser) tryEval(expr string, out any) error {
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := b.try("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &r); err != nil {
		return err
	}
	if e := r.ExceptionDetails; e != nil {
		return fmt.Errorf("%s %s", e.Text, e.Exception.Description)
	}
	if len(r.Result.Value) == 0 {
		return errors.New("no value")
	}
	return json.Unmarshal(r.Result.Value, out)
}

// screenshot saves the page as a PNG file.
func (b *browser) screenshot(t *testing.T, path string) {
	t.Helper()
	var r struct {
		Data string `json:"data"`
	}
	b.call(t, "Page.captureScreenshot", map[string]any{"format": "png"}, &r)
	png, err := base64.StdEncoding.DecodeString(r.Data)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
}

func (b *browser) log() string {
	lw := b.cmd.Stderr.(*lockedWriter)
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return b.stderr.String()
}

// close asks the browser to quit, then kills its process group.
func (b *browser) close() {
	b.session = ""
	_ = b.try("Browser.close", nil, nil)
	select {
	case <-b.done:
	case <-time.After(5 * time.Second):
	}
	_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
	_ = b.cmd.Wait()
	_ = b.w.Close()
}
