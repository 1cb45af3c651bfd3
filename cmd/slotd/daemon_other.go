//go:build !unix

package main

import "errors"

// daemonize is not available off Unix.
func daemonize() (bool, error) {
	return false, errors.New("daemonize is not supported on this platform")
}
