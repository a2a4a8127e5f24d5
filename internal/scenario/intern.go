package scenario

// maxInterned bounds the URLs a step may precompute.
const maxInterned = 4096

// internURLs precomputes, for each step whose URL only varies with picked
// variables (such as /sku/{{sku}} with sku picked from a list), every URL
// it can produce, so that sending one allocates nothing: the strings are
// shared, read-only, by all users.
func (s *Scenario) internURLs() {
	byslot := map[int]*varDef{}
	for _, v := range s.vars {
		byslot[v.slot] = v
	}
	for _, st := range append(append([]*step(nil), s.setup...), s.steps...) {
		if st.constURL {
			continue
		}
		var picks []*varDef
		combos, finite := 1, true
		for _, sg := range st.url {
			if sg.kind == segLit {
				continue
			}
			v := byslot[sg.slot]
			if sg.kind != segSlot || v == nil || (v.kind != varPick && v.kind != varConst) {
				finite = false
				break
			}
			if v.kind == varPick && !containsVar(picks, v) {
				picks = append(picks, v)
				combos *= len(v.choices)
				if combos > maxInterned {
					finite = false
					break
				}
			}
		}
		if !finite {
			continue
		}
		u := &user{slots: make([]value, s.nslots)}
		for _, v := range s.vars {
			if v.kind == varConst {
				u.slots[v.slot] = value{text: v.val.text, kind: v.val.kind, set: true}
			}
		}
		st.urlIntern = make(map[string]string, combos)
		var fill func(i int)
		fill = func(i int) {
			if i == len(picks) {
				b, err := u.render(nil, st.url)
				if err == nil {
					st.urlIntern[string(b)] = string(b)
				}
				return
			}
			for _, c := range picks[i].choices {
				u.slots[picks[i].slot] = value{text: c.text, kind: c.kind, set: true}
				fill(i + 1)
			}
		}
		fill(0)
	}
}

func containsVar(list []*varDef, v *varDef) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
