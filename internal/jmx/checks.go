package jmx

import (
	"regexp"
	"strconv"
	"strings"
)

// Post-processors and assertions: a step's captures and expectations.

// extractor translates a post-processor into captures of st.
func (im *importer) extractor(st *stepOut, pp *element) {
	switch pp.typ() {
	case tagJSONExtract:
		if s := pp.str("Sample.scope"); s != "" && s != "parent" {
			im.skip(pp, "only the main sample's response is translated (scope %q)", s)
			return
		}
		names := strings.Split(pp.str("JSONPostProcessor.referenceNames"), ";")
		paths := strings.Split(pp.str("JSONPostProcessor.jsonPathExprs"), ";")
		defs := strings.Split(pp.rawStr("JSONPostProcessor.defaultValues"), ";")
		matches := strings.Split(pp.str("JSONPostProcessor.match_numbers"), ";")
		if len(names) != len(paths) {
			im.skip(pp, "%d names for %d JSON paths", len(names), len(paths))
			return
		}
		for i, n := range names {
			m := ""
			if i < len(matches) {
				m = strings.TrimSpace(matches[i])
			}
			d := ""
			if i < len(defs) {
				d = defs[i]
			}
			im.jsonCapture(st, pp, strings.TrimSpace(n), strings.TrimSpace(paths[i]), m, d)
		}
	case tagJSONPath:
		if s := pp.str("SUBJECT"); s != "" && s != "BODY" {
			im.skip(pp, "only the response body is translated (subject %q)", s)
			return
		}
		im.jsonCapture(st, pp, pp.str("VAR"), pp.str("JSONPATH"), "", pp.rawStr("DEFAULT"))
	case tagRegex:
		c := captureOut{name: ident(pp.str("RegexExtractor.refname")), kind: "regex", src: pp.rawStr("RegexExtractor.regex"), match: 1}
		switch h := pp.str("RegexExtractor.useHeaders"); h {
		case "", "false":
		case "true":
			c.headers = true
		default:
			im.skip(pp, "only the body and the headers are searched (field %q)", h)
			return
		}
		if s := pp.str("Sample.scope"); s != "" && s != "parent" {
			im.skip(pp, "only the main sample's response is translated (scope %q)", s)
			return
		}
		g := groupRe.FindStringSubmatch(pp.str("RegexExtractor.template"))
		if g == nil {
			im.skip(pp, "template %q: only a single group ($1$) is translated", pp.str("RegexExtractor.template"))
			return
		}
		c.group, _ = strconv.Atoi(g[1])
		if m := pp.str("RegexExtractor.match_number"); m != "" {
			n, err := strconv.Atoi(m)
			if err != nil || n < 1 {
				im.skip(pp, "match number %q: only a fixed match (1, 2, ...) is translated, not random (0) or all (-1)", m)
				return
			}
			c.match = n
		}
		re, err := regexp.Compile(c.src)
		if err != nil {
			im.skip(pp, "the regular expression is not RE2 (Go) syntax: %v", err)
			return
		}
		if c.group > re.NumSubexp() {
			im.skip(pp, "group %d of an expression with %d groups", c.group, re.NumSubexp())
			return
		}
		if d := pp.rawStr("RegexExtractor.default"); d != "" || pp.boolean("RegexExtractor.default_empty_value", false) {
			c.def, c.hasDef = d, true
		} else {
			im.note("Regular Expression Extractor %q has no default: JMeter keeps the variable's previous value when nothing matches; the scenario fails the step", pp.name())
		}
		st.captures = append(st.captures, c)
	}
}

func (im *importer) jsonCapture(st *stepOut, pp *element, name, path, match, def string) {
	if name == "" || path == "" {
		im.skip(pp, "a name or JSON path is empty")
		return
	}
	if !pathRe.MatchString(path) {
		im.skip(pp, "JSON path %q: only $.a.b, $.a[0] and $[\"a\"] are translated (no wildcards, filters or ..)", path)
		return
	}
	if match != "" && match != "1" && match != "0" {
		im.skip(pp, "match number %q of a path that selects one value", match)
		return
	}
	st.captures = append(st.captures, captureOut{name: ident(name), kind: "json", src: path, def: def, hasDef: true})
}

// Response Assertion test types (bits).
const (
	rtMatch     = 1
	rtContains  = 2
	rtNot       = 4
	rtEquals    = 8
	rtSubstring = 16
	rtOr        = 32
)

// assertion translates an assertion into st's expectations.
func (im *importer) assertion(st *stepOut, a *element) {
	switch a.typ() {
	case tagRespAssert:
		im.responseAssertion(st, a)
	case tagJSONAssert:
		path := a.str("JSON_PATH")
		if !pathRe.MatchString(path) {
			im.skip(a, "JSON path %q: only $.a.b, $.a[0] and $[\"a\"] are translated", path)
			return
		}
		for _, j := range st.json {
			if j.path == path {
				im.skip(a, "a second assertion on %s for the same sampler", path)
				return
			}
		}
		invert := a.boolean("INVERT", false)
		j := jsonOut{path: path}
		switch {
		case !a.boolean("JSONVALIDATION", false):
			j.exists = 1
			if invert {
				j.exists = -1
			}
		case invert:
			im.skip(a, "an inverted value check is not translated (only inverted existence)")
			return
		case a.boolean("EXPECT_NULL", false):
			j.kind = "null"
		default:
			want := a.rawStr("EXPECTED_VALUE")
			if a.boolean("ISREGEX", true) && regexp.QuoteMeta(want) != want {
				im.skip(a, "expected value %q is a regular expression: only exact values are translated", want)
				return
			}
			v, ok := im.tmpl(a, want)
			if !ok {
				return
			}
			j.value, j.kind = v, "string"
			switch {
			case numberRe.MatchString(v):
				j.kind = "number"
			case v == "true" || v == "false":
				j.kind = "bool"
			}
		}
		st.json = append(st.json, j)
	}
}

func (im *importer) responseAssertion(st *stepOut, a *element) {
	typ, _ := strconv.Atoi(a.str("Assertion.test_type"))
	var tests []string
	for _, k := range a.n.kids {
		if k.attrs["name"] == "Asserion.test_strings" || k.attrs["name"] == "Assertion.test_strings" {
			for _, s := range k.kids {
				tests = append(tests, s.text)
			}
		}
	}
	if s := a.str("Assertion.scope"); s != "" && s != "parent" {
		im.skip(a, "only the main sample is translated (scope %q)", s)
		return
	}
	if typ&rtNot != 0 {
		im.skip(a, "a negated (Not) assertion is not translated")
		return
	}
	if len(tests) == 0 {
		im.skip(a, "no pattern to test")
		return
	}
	assume := a.boolean("Assertion.assume_success", false)
	switch a.str("Assertion.test_field") {
	case "Assertion.response_code":
		if st.status != nil {
			im.skip(a, "a second status assertion for the same sampler")
			return
		}
		if len(tests) > 1 && typ&rtOr == 0 {
			im.skip(a, "several status codes that must all match")
			return
		}
		var codes []int
		for _, t := range tests {
			c, err := strconv.Atoi(strings.TrimSpace(t))
			if err != nil || c < 100 || c > 599 {
				im.skip(a, "status pattern %q: only status codes are translated", t)
				return
			}
			if c >= 400 && !assume {
				im.skip(a, "expects status %d without \"Ignore Status\": JMeter counts such a sample failed whatever the assertion says", c)
				return
			}
			codes = append(codes, c)
		}
		st.status = codes
	case "Assertion.response_data":
		if assume {
			im.skip(a, "\"Ignore Status\" on a body assertion: a scenario checks the status too")
			return
		}
		if len(tests) > 1 {
			im.skip(a, "several patterns: a step has one body_contains and one body_matches")
			return
		}
		t := tests[0]
		switch {
		case typ&rtSubstring != 0:
			if st.contains != "" {
				im.skip(a, "a second substring assertion for the same sampler")
				return
			}
			v, ok := im.tmpl(a, t)
			if !ok {
				return
			}
			st.contains = v
		case typ&(rtMatch|rtContains|rtEquals) != 0:
			if st.matches != "" {
				im.skip(a, "a second pattern assertion for the same sampler")
				return
			}
			if strings.Contains(t, "${") {
				im.skip(a, "a pattern with variables is not translated")
				return
			}
			re := t
			switch {
			case typ&rtEquals != 0:
				re = "^" + regexp.QuoteMeta(t) + "$"
			case typ&rtMatch != 0:
				re = "^(?:" + t + ")$"
				im.note("Response Assertion %q: JMeter's Matches mode lets '.' match newlines ((?s)); the scenario does not", a.name())
			}
			if _, err := regexp.Compile(re); err != nil {
				im.skip(a, "the pattern is not RE2 (Go) syntax: %v", err)
				return
			}
			st.matches = re
		default:
			im.skip(a, "unknown test type %d", typ)
		}
	default:
		im.skip(a, "only the response code and the response body (text) are translated, not %q", a.str("Assertion.test_field"))
	}
}
