package netio

import (
	"net"

	"github.com/panjf2000/gnet/v2"
)

// Protected mode: with protected-mode yes and a default user that needs no
// password, Redis 7.0 answers every client that is not local with -DENIED
// and closes its connection, whatever bind says.

const errProtectedMode = "-DENIED Redis is running in protected mode because protected mode is enabled and no " +
	"password is set for the default user. In this mode connections are only accepted from the loopback interface. " +
	"If you want to connect from external computers to Redis you may adopt one of the following solutions: " +
	"1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface " +
	"by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly " +
	"accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. " +
	"2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting " +
	"the protected mode option to 'no', and then restarting the server. " +
	"3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. " +
	"4) Setup a an authentication password for the default user. " +
	"NOTE: You only need to do one of the above things in order for the server to start accepting connections " +
	"from the outside.\r\n"

// localClient reports whether a client address ("ip:port") is local as
// Redis's islocalClient decides it: 127.0.0.1 or ::1 exactly.
func localClient(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.Equal(net.IPv4(127, 0, 0, 1)) || ip.Equal(net.IPv6loopback))
}

// protectedRefusal returns the -DENIED reply for a new connection that
// protected mode turns away, or nil.
func (s *Server) protectedRefusal(c gnet.Conn) []byte {
	if !s.Cfg.Bool("protected-mode") || !s.ACL.Default.User().NoPass {
		return nil
	}
	if a := c.RemoteAddr(); a != nil && localClient(a.String()) {
		return nil
	}
	return []byte(errProtectedMode)
}
