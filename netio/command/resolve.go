package command

import "strings"

// Resolve finds the spec a command line names — the subcommand's for a
// container such as CLUSTER or OBJECT — and checks its arity, answering
// Redis's error texts: errMsg is the reply when the command cannot run,
// and spec is nil only when the command itself is unknown. The checks that
// depend on a server's state (authentication, MISCONF, the replication
// gate) are the server's.
func Resolve(args [][]byte) (spec *Spec, errMsg string) {
	spec = Lookup(args[0])
	if spec == nil {
		return nil, UnknownCommand(args)
	}
	if spec.Subcommands != nil && !spec.Bound() || (spec.Subcommands != nil && len(args) >= 2 && spec.Sub(args[1]) != nil) {
		if len(args) < 2 {
			return nil, "ERR wrong number of arguments for '" + spec.Name + "' command"
		}
		sub := spec.Sub(args[1])
		if sub == nil {
			return nil, "ERR unknown subcommand '" + truncate(string(args[1]), 128) + "'. Try " +
				strings.ToUpper(spec.Name) + " HELP."
		}
		spec = sub
	}
	if !spec.ArityOK(len(args)) {
		return spec, "ERR wrong number of arguments for '" + spec.Name + "' command"
	}
	return spec, ""
}

// UnknownCommand is Redis's reply to a command name it does not know: the
// name and the first arguments, each cut to 128 bytes, 128 bytes of
// arguments at most.
func UnknownCommand(args [][]byte) string {
	var b strings.Builder
	b.WriteString("ERR unknown command '")
	b.WriteString(truncate(string(args[0]), 128))
	b.WriteString("', with args beginning with: ")
	n := 0
	for _, a := range args[1:] {
		if n >= 128 {
			break
		}
		part := "'" + truncate(string(a), 128-n) + "' "
		n += len(part)
		b.WriteString(part)
	}
	return b.String()
}

func truncate(s string, n int) string {
	if len(s) > max(n, 0) {
		return s[:max(n, 0)]
	}
	return s
}
