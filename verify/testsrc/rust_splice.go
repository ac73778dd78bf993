package testsrc

// rustTestModule is one top-level #[cfg(test)] module: its name and its
// byte range, attributes included.
type rustTestModule struct {
	name       string
	start, end uint32
}

// rustTestModules returns a Rust file's top-level #[cfg(test)] modules,
// and whether any #[test] function stands outside them (a test the
// module swap cannot carry).
func rustTestModules(src []byte) ([]rustTestModule, bool) {
	tree := parse(rustGrammar, src)
	if tree == nil {
		return nil, false
	}
	defer tree.Close()
	var mods []rustTestModule
	loose := false
	var pending []span
	cfgTest, isTest := false, false
	for _, c := range children(tree.RootNode()) {
		switch c.Type() {
		case "attribute_item":
			a := rustAttr(c, src)
			cfgTest = cfgTest || a == "cfg(test)"
			isTest = isTest || isRustTestAttr(a)
			pending = append(pending, span{c.StartByte(), c.EndByte()})
			continue
		case "line_comment", "block_comment":
			continue
		case "mod_item":
			if cfgTest && c.ChildByFieldName("body") != nil {
				start := c.StartByte()
				if len(pending) > 0 {
					start = pending[0].start
				}
				mods = append(mods, rustTestModule{name: text(c.ChildByFieldName("name"), src), start: start, end: c.EndByte()})
			}
		case "function_item":
			loose = loose || isTest
		}
		pending, cfgTest, isTest = nil, false, false
	}
	return mods, !loose
}

// SpliceRustTests returns the original version of a Rust source file with
// its #[cfg(test)] modules replaced by the changed version's (a module
// the original lacks is added at its end), so the change's unit tests run
// against the original code and nothing else of the change. ok is false
// when now has no such module, or has a #[test] function outside one.
func SpliceRustTests(base, now []byte) ([]byte, bool) {
	newMods, clean := rustTestModules(now)
	if !clean || len(newMods) == 0 {
		return nil, false
	}
	oldMods, _ := rustTestModules(base)
	at := map[string]rustTestModule{}
	for _, m := range oldMods {
		at[m.name] = m
	}
	out := append([]byte(nil), base...)
	var added []byte
	// Replace from the end so earlier offsets stay valid.
	for i := len(newMods) - 1; i >= 0; i-- {
		m := newMods[i]
		body := now[m.start:m.end]
		old, ok := at[m.name]
		if !ok {
			added = append(append([]byte("\n"), body...), append([]byte("\n"), added...)...)
			continue
		}
		out = append(out[:old.start:old.start], append(append([]byte(nil), body...), out[old.end:]...)...)
	}
	return append(out, added...), true
}
