package scenario

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	"gopkg.in/yaml.v3"
)

// The keys of one entry of the data section.
var feedKeys = []string{"file", "names", "skip_first_line", "delimiter", "each", "share"}

// feed is one CSV file of the data section: each column is a variable that
// takes its value from the current row (JMeter's CSV Data Set Config).
type feed struct {
	file  string
	slots []int // a slot per column; -1: the column is overridden by --var
	rows  [][]value
	// perUser: a user takes one row when it starts and keeps it; else it
	// takes the next row at every iteration.
	perUser bool
	// shared: all users take rows from one sequence (each row once, in
	// turn, starting over at the end); else every user reads the file from
	// its first row.
	shared bool
	next   atomic.Uint64
}

// take returns the next row for a user whose own position is *pos.
func (f *feed) take(pos *int) []value {
	var i int
	if f.shared {
		i = int((f.next.Add(1) - 1) % uint64(len(f.rows)))
	} else {
		i = *pos % len(f.rows)
		*pos = i + 1
	}
	return f.rows[i]
}

// fill copies row into the user's slots.
func (f *feed) fill(slots []value, row []value) {
	for j, slot := range f.slots {
		if slot < 0 {
			continue
		}
		sl := &slots[slot]
		sl.text, sl.kind, sl.set = sl.text[:0], kString, true
		if j < len(row) {
			sl.text, sl.kind = append(sl.text, row[j].text...), row[j].kind
		}
	}
}

// startUser gives a new user its row when rows are taken per user. User 0
// (the setup section) reads the first row without taking it.
func (u *user) startFeeds() {
	for i, f := range u.s.feeds {
		u.feedPos[i] = 0
		switch {
		case u.n == 0:
			f.fill(u.slots, f.rows[0])
		case f.perUser:
			f.fill(u.slots, f.take(&u.feedPos[i]))
		}
	}
}

// iterateFeeds sets the columns of the feeds read at every iteration.
func (u *user) iterateFeeds() {
	if u.n == 0 {
		return
	}
	for i, f := range u.s.feeds {
		if !f.perUser {
			f.fill(u.slots, f.take(&u.feedPos[i]))
		}
	}
}

// feeds reads the data section: every CSV file now, so a missing file or a
// bad row is a load-time error.
func (p *parser) feeds(top map[string]kv) {
	d, ok := top["data"]
	if !ok || d.v.Kind == yaml.ScalarNode && d.v.Tag == "!!null" {
		return
	}
	if d.v.Kind != yaml.SequenceNode {
		p.errAt(d.v, "data", "write a list: each entry starts with '- file: users.csv'", "want a list, got %s", describe(d.v))
		return
	}
	fileVars := map[string]bool{}
	if v, ok := top["vars"]; ok && v.v.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(v.v.Content); i += 2 {
			fileVars[v.v.Content[i].Value] = true
		}
	}
	for i, n := range d.v.Content {
		if f := p.feed(resolve(n), fmt.Sprintf("data[%d]", i), fileVars); f != nil {
			p.s.feeds = append(p.s.feeds, f)
		}
	}
}

func (p *parser) feed(n *yaml.Node, field string, fileVars map[string]bool) *feed {
	_, f := p.mapping(n, field, feedKeys)
	fl, ok := f["file"]
	if !ok {
		p.errAt(n, field+".file", "write file: users.csv (relative to the scenario file)", "missing file")
		return nil
	}
	name, ok := p.str(fl.v, field+".file")
	if !ok {
		return nil
	}
	fd := &feed{file: name, shared: true}
	path := name
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(p.file), path)
	}
	comma := ','
	if dl, ok := f["delimiter"]; ok {
		s := strings.ReplaceAll(dl.v.Value, `\t`, "\t")
		r := []rune(s)
		if len(r) != 1 || r[0] == '"' || r[0] == '\n' || r[0] == '\r' {
			p.errAt(dl.v, field+".delimiter", `one character, e.g. ";" or "\t"`, "bad delimiter %s", describe(dl.v))
		} else {
			comma = r[0]
		}
	}
	fd.perUser = p.choice(f, "each", field, []string{"iteration", "user"}) == "user"
	fd.shared = p.choice(f, "share", field, []string{"all", "user"}) != "user"
	data, err := os.ReadFile(path)
	if err != nil {
		p.errAt(fl.v, field+".file", "the path is relative to the scenario file", "cannot read %s: %v", path, errors.Unwrap(err))
		return nil
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	r := csv.NewReader(bytes.NewReader(data))
	r.Comma, r.FieldsPerRecord, r.LazyQuotes, r.ReuseRecord = comma, -1, true, false
	var records [][]string
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			p.errAt(fl.v, field+".file", "", "%s: %v", name, err)
			return nil
		}
		records = append(records, rec)
	}
	var names []string
	namesNode := fl.v
	if nm, ok := f["names"]; ok {
		namesNode = nm.v
		if nm.v.Kind != yaml.SequenceNode || len(nm.v.Content) == 0 {
			p.errAt(nm.v, field+".names", "write names: [email, password]", "want a non-empty list, got %s", describe(nm.v))
			return nil
		}
		for _, c := range nm.v.Content {
			names = append(names, c.Value)
		}
		if sk, ok := f["skip_first_line"]; ok && sk.v.Value == "true" && len(records) > 0 {
			records = records[1:]
		}
	} else {
		if len(records) == 0 {
			p.errAt(fl.v, field+".file", "the first line names the columns, unless names: is given", "%s is empty", name)
			return nil
		}
		names, records = records[0], records[1:]
	}
	if len(records) == 0 {
		p.errAt(fl.v, field+".file", "a data file needs at least one row of values", "%s has no rows", name)
		return nil
	}
	for _, col := range names {
		col = strings.TrimSpace(col)
		switch {
		case !identRe.MatchString(col) || slices.Contains(builtinNames, col):
			p.errAt(namesNode, field+".names", "a column name is letters, digits and _, and not one of "+strings.Join(builtinNames, ", "),
				"bad column name %q", col)
			fd.slots = append(fd.slots, -1)
		case p.syms[col] != nil || fileVars[col]:
			p.errAt(namesNode, field+".names", "rename the column or the variable", "column %q is already a variable", col)
			fd.slots = append(fd.slots, -1)
		case hasKey(p.opts.Vars, col):
			fd.slots = append(fd.slots, -1) // --var wins
		default:
			slot := p.s.nslots
			p.s.nslots++
			p.syms[col] = &symbol{slot: slot, defined: true}
			fd.slots = append(fd.slots, slot)
		}
	}
	for _, rec := range records {
		row := make([]value, len(rec))
		for j, cell := range rec {
			row[j] = inferValue(cell)
		}
		fd.rows = append(fd.rows, row)
	}
	return fd
}

// choice reads an optional key whose value is one of allowed (the first is
// the default).
func (p *parser) choice(f map[string]kv, key, field string, allowed []string) string {
	c, ok := f[key]
	if !ok {
		return allowed[0]
	}
	if !slices.Contains(allowed, c.v.Value) {
		p.errAt(c.v, join(field, key), "one of "+strings.Join(allowed, ", "), "unknown value %s", describe(c.v))
		return allowed[0]
	}
	return c.v.Value
}

func hasKey(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}
