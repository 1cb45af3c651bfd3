// Command slotd is a Redis Cluster–compatible server node.
//
//	slotd [config-file] [--directive value ...]
//
// takes redis.conf directives like redis-server does.
//
//	slotd demo [--nodes 3] [--port 7000]
//
// starts a local cluster of slotd child processes (see demo.go).
//
//	slotd trace --cluster host:port [--since 30s] [--format text|chrome]
//
// merges the actor trace rings of every node into one causally ordered
// timeline (see tracecmd.go).
package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"runtime/trace"
	"syscall"

	"github.com/slotd/slotd/cmd/node"
	"github.com/slotd/slotd/netio"
	"github.com/slotd/slotd/netio/config"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "demo" {
		os.Exit(runDemo(os.Args[2:], os.Stdout, os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == "trace" {
		os.Exit(runTrace(os.Args[2:], os.Stdout, os.Stderr))
	}
	cfg := config.New()
	cfg.SetChdir(true) // like redis-server: relative paths resolve in dir
	if err := cfg.LoadArgs(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if cfg.Bool("daemonize") {
		parent, err := daemonize()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if parent {
			os.Exit(0)
		}
	}
	// SLOTD_CPUPROFILE=file writes a Go CPU profile until shutdown (for the
	// performance work in bench/).
	if path := os.Getenv("SLOTD_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err == nil && pprof.StartCPUProfile(f) == nil {
			defer func() { pprof.StopCPUProfile(); _ = f.Close() }()
		}
	}
	// SLOTD_TRACE=file writes a Go execution trace until shutdown (where a
	// request waited: `go tool trace -pprof=sched file`).
	if path := os.Getenv("SLOTD_TRACE"); path != "" {
		f, err := os.Create(path)
		if err == nil && trace.Start(f) == nil {
			defer func() { trace.Stop(); _ = f.Close() }()
		}
	}
	netio.ReserveSpareP()
	n, err := node.Start(cfg)
	if err != nil {
		if !errors.As(err, new(*node.LoggedError)) {
			fmt.Fprintln(os.Stderr, err)
		}
		os.Exit(1)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- n.Wait() }()
	// The shutdown runs beside this loop: it may wait (failover on
	// shutdown, lagging replicas), and a second SIGINT meanwhile exits at
	// once, as in Redis.
	term := make(chan error, 1)
	terminating := ""
	for {
		select {
		case s := <-sig:
			name, directive := "SIGTERM", "shutdown-on-sigterm"
			if s == syscall.SIGINT {
				name, directive = "SIGINT", "shutdown-on-sigint"
			}
			if terminating != "" {
				if s == syscall.SIGINT {
					n.Log.Warn().Msg("You insist... exiting now.")
					os.Exit(1)
				}
				continue
			}
			n.Log.Warn().Msgf("Received %s scheduling shutdown...", name)
			terminating = name
			go func() { term <- n.Terminate(directive) }()
		case err := <-term:
			if err != nil {
				n.Log.Warn().Msgf("%s received but errors trying to shut down the server, check the logs for more information", terminating)
				terminating = ""
				continue
			}
			return
		case err := <-done:
			// The server stops first when SHUTDOWN stops the node: let that
			// stop finish (it returns at once when nothing is stopping).
			n.Stop()
			if err != nil {
				n.Log.Error().Err(err).Msg("server stopped")
				pprof.StopCPUProfile()
				os.Exit(1)
			}
			return
		}
	}
}
