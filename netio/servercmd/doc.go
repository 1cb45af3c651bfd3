// Package servercmd owns the server administration commands that run on
// the event loop: COMMAND (generated from the command table), CONFIG
// (backed by netio/config), the persistence commands SAVE, BGSAVE,
// BGREWRITEAOF, LASTSAVE with DEBUG RELOAD, LOADAOF and POPULATE (backed by
// the server's Persistence), and DEBUG DIGEST / DIGEST-VALUE (run as fanouts
// of the engine's digest specs). The wiring registers them with Register.
package servercmd
