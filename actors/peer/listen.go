package peer

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// Listener accepts inbound bus connections on one or more addresses.
type Listener struct {
	ls   []net.Listener
	wg   sync.WaitGroup
	once sync.Once
}

// Listen binds every address ("host:port") and hands each accepted
// connection to accept, on the listener's goroutine (accept must not
// block). It fails, closing what it opened, if any address cannot be bound.
func Listen(addrs []string, accept func(net.Conn)) (*Listener, error) {
	l := &Listener{}
	for _, a := range addrs {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			l.Close()
			return nil, fmt.Errorf("%s: %w", a, err)
		}
		l.ls = append(l.ls, ln)
	}
	for _, ln := range l.ls {
		l.wg.Add(1)
		go l.serve(ln, accept)
	}
	return l, nil
}

// Addrs returns the bound addresses.
func (l *Listener) Addrs() []net.Addr {
	out := make([]net.Addr, len(l.ls))
	for i, ln := range l.ls {
		out[i] = ln.Addr()
	}
	return out
}

func (l *Listener) serve(ln net.Listener, accept func(net.Conn)) {
	defer l.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			// Out of file descriptors and the like: keep serving, as
			// Redis does, but don't spin.
			time.Sleep(10 * time.Millisecond)
			continue
		}
		accept(c)
	}
}

// Close stops accepting and waits for the accept loops to end. Safe to
// call twice.
func (l *Listener) Close() {
	l.once.Do(func() {
		for _, ln := range l.ls {
			_ = ln.Close()
		}
		l.wg.Wait()
	})
}
