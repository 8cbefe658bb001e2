package fakecli

// SIGINT while Claude Code is still starting its turn (captured from
// 2.1.331: sigint-at-startup, sigint-during-startup,
// sigint-before-response; docs/protocols/claude.md#sigint-startup): the
// CLI holds a SIGINT that comes before its turn has begun (before the
// turn's system/init) and acts on it once the turn begins: it writes
// system/init, "[Request interrupted by user]" and an error result
// (aborted_streaming), and exits 0. A CLI that never gets that far (stuck
// in its start-up) never acts on it, and only SIGTERM or SIGKILL stop it.
// (In its first few hundred milliseconds, before it handles SIGINT at
// all, the real CLI dies of it, exit 130, having written nothing; the
// fake has no such start-up and does not play that part. While the
// model's first response is awaited, the real CLI leaves the result out
// in about half the runs and exits 0 after the user message: the fake
// always writes it.)

// deferSIGINT holds a SIGINT that comes before the running turn's
// system/init (in print mode, before the first turn has begun at all);
// it reports whether it did.
func (c *claudeState) deferSIGINT(e *engine) bool {
	starting := c.turnActive || !c.streamIn && c.results == 0
	if !starting || c.initSeen {
		return false
	}
	c.deferredInt = true
	return true
}

// sawInit notes that the running turn's system/init was written, and
// acts on a SIGINT held until then.
func (c *claudeState) sawInit(e *engine) flow {
	c.initSeen = true
	if !c.deferredInt {
		return flowNone
	}
	c.deferredInt = false
	return c.interrupt(e, "", true)
}
