package jmx

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testPlan wraps thread group children in a plan with HTTP Request
// Defaults (127.0.0.1:8080) and a thread group of 1 thread x 1 loop.
func testPlan(children string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>
<jmeterTestPlan version="1.2" properties="5.0" jmeter="5.6.3">
  <hashTree>
    <TestPlan guiclass="TestPlanGui" testclass="TestPlan" testname="t"/>
    <hashTree>
      <ConfigTestElement guiclass="HttpDefaultsGui" testclass="ConfigTestElement" testname="defaults">
        <stringProp name="HTTPSampler.domain">127.0.0.1</stringProp>
        <stringProp name="HTTPSampler.port">8080</stringProp>
      </ConfigTestElement>
      <hashTree/>
      <ThreadGroup guiclass="ThreadGroupGui" testclass="ThreadGroup" testname="tg">
        <stringProp name="ThreadGroup.num_threads">1</stringProp>
        <stringProp name="ThreadGroup.ramp_time">0</stringProp>
        <stringProp name="ThreadGroup.on_sample_error">startnextloop</stringProp>
        <elementProp name="ThreadGroup.main_controller" elementType="LoopController">
          <stringProp name="LoopController.loops">1</stringProp>
        </elementProp>
      </ThreadGroup>
      <hashTree>
` + children + `
      </hashTree>
    </hashTree>
  </hashTree>
</jmeterTestPlan>
`
}

// smp is an HTTP Request with optional parameters (name=value, URL
// encoded) and children.
func smp(name, method, path, params, children string) string {
	var args strings.Builder
	for _, p := range strings.Split(params, "&") {
		if p == "" {
			continue
		}
		n, v, _ := strings.Cut(p, "=")
		fmt.Fprintf(&args, `<elementProp name="%s" elementType="HTTPArgument">
  <boolProp name="HTTPArgument.always_encode">true</boolProp>
  <stringProp name="Argument.name">%s</stringProp>
  <stringProp name="Argument.value">%s</stringProp>
  <boolProp name="HTTPArgument.use_equals">true</boolProp>
</elementProp>`, n, n, v)
	}
	return fmt.Sprintf(`<HTTPSamplerProxy guiclass="HttpTestSampleGui" testclass="HTTPSamplerProxy" testname="%s">
  <stringProp name="HTTPSampler.path">%s</stringProp>
  <stringProp name="HTTPSampler.method">%s</stringProp>
  <elementProp name="HTTPsampler.Arguments" elementType="Arguments">
    <collectionProp name="Arguments.arguments">%s</collectionProp>
  </elementProp>
</HTTPSamplerProxy>
<hashTree>%s</hashTree>
`, name, path, method, args.String(), children)
}

// el is a leaf element with string properties "name=value|name=value".
func el(tag, name, props string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<%s testclass="%s" testname="%s">`, tag, tag, name)
	for _, p := range strings.Split(props, "|") {
		if p == "" {
			continue
		}
		n, v, _ := strings.Cut(p, "=")
		fmt.Fprintf(&b, `<stringProp name="%s">%s</stringProp>`, n, v)
	}
	fmt.Fprintf(&b, "</%s>\n<hashTree/>\n", tag)
	return b.String()
}

func respAssert(field string, typ int, assume bool, tests ...string) string {
	var ts strings.Builder
	for i, t := range tests {
		fmt.Fprintf(&ts, `<stringProp name="%d">%s</stringProp>`, i, t)
	}
	return fmt.Sprintf(`<ResponseAssertion testclass="ResponseAssertion" testname="ra">
  <collectionProp name="Asserion.test_strings">%s</collectionProp>
  <stringProp name="Assertion.test_field">Assertion.%s</stringProp>
  <boolProp name="Assertion.assume_success">%t</boolProp>
  <intProp name="Assertion.test_type">%d</intProp>
</ResponseAssertion>
<hashTree/>
`, ts.String(), field, assume, typ)
}

func headers(pairs ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(pairs); i += 2 {
		fmt.Fprintf(&b, `<elementProp name="" elementType="Header"><stringProp name="Header.name">%s</stringProp><stringProp name="Header.value">%s</stringProp></elementProp>`, pairs[i], pairs[i+1])
	}
	return `<HeaderManager testclass="HeaderManager" testname="h"><collectionProp name="HeaderManager.headers">` + b.String() + "</collectionProp></HeaderManager>\n<hashTree/>\n"
}

func udv(pairs ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(pairs); i += 2 {
		fmt.Fprintf(&b, `<elementProp name="%s" elementType="Argument"><stringProp name="Argument.name">%s</stringProp><stringProp name="Argument.value">%s</stringProp></elementProp>`, pairs[i], pairs[i], pairs[i+1])
	}
	return `<Arguments guiclass="ArgumentsPanel" testclass="Arguments" testname="vars"><collectionProp name="Arguments.arguments">` + b.String() + "</collectionProp></Arguments>\n<hashTree/>\n"
}

func TestElements(t *testing.T) {
	tests := []struct {
		name     string
		children string // of the thread group
		want     []string
		skip     string // in the skipped list; "" for none
	}{
		// POST parameters are a form body, URL encoded when asked.
		{"form body", smp("s", "POST", "/user", "a=1&b=x y", ""),
			[]string{"body: a=1&b=x+y", "Content-Type: application/x-www-form-urlencoded"}, ""},
		// GET parameters are a query string.
		{"query", smp("s", "GET", "/x", "a=1", ""), []string{"url: /x?a=1"}, ""},
		// A sampler's full URL to another server stays absolute.
		{"absolute", smp("s", "GET", "http://other:9/x", "", ""), []string{"url: http://other:9/x"}, ""},
		// An inner Header Manager replaces an outer header of the same name.
		{"header scope", headers("X-A", "outer", "X-B", "b") + smp("s", "GET", "/x", "", headers("x-a", "inner")),
			[]string{"X-B: b", "x-a: inner"}, ""},
		// Constant Timers in scope add up.
		{"timers", el("ConstantTimer", "t1", "ConstantTimer.delay=100") + smp("s", "GET", "/x", "", el("ConstantTimer", "t2", "ConstantTimer.delay=50")),
			[]string{"pause: 150ms"}, ""},
		// Status codes with Or.
		{"status or", smp("s", "GET", "/x", "", respAssert("response_code", 8|32, false, "200", "201")), []string{"status: [200, 201]"}, ""},
		// A 4xx expected without Ignore Status: JMeter fails the sample anyway.
		{"status 404", smp("s", "GET", "/x", "", respAssert("response_code", 8, false, "404")), nil, "without \"Ignore Status\""},
		// ...and with it, the status is expected.
		{"status 404 ignored", smp("s", "GET", "/x", "", respAssert("response_code", 8, true, "404")), []string{"status: 404"}, ""},
		// Equals on the body is an anchored, quoted expression.
		{"equals", smp("s", "GET", "/x", "", respAssert("response_data", 8, false, "a.b")), []string{`body_matches: ^a\.b$`}, ""},
		// Matches is anchored.
		{"matches", smp("s", "GET", "/x", "", respAssert("response_data", 1, false, "[a-z]+")), []string{`body_matches: ^(?:[a-z]+)$`}, ""},
		// Contains is a search.
		{"contains", smp("s", "GET", "/x", "", respAssert("response_data", 2, false, "id=[0-9]+")), []string{`body_matches: id=[0-9]+`}, ""},
		// Headers are not asserted on.
		{"headers field", smp("s", "GET", "/x", "", respAssert("response_headers", 16, false, "json")), nil, "only the response code and the response body"},
		// Several substrings that must all be there.
		{"two substrings", smp("s", "GET", "/x", "", respAssert("response_data", 16, false, "a", "b")), nil, "several patterns"},
		// A JSON null.
		{"json null", smp("s", "GET", "/x", "", el("JSONPathAssertion", "j", "JSON_PATH=$.x|JSONVALIDATION=true|EXPECT_NULL=true")), []string{"$.x: null"}, ""},
		// A boolean value.
		{"json bool", smp("s", "GET", "/x", "", el("JSONPathAssertion", "j", "JSON_PATH=$.ok|JSONVALIDATION=true|EXPECTED_VALUE=true|ISREGEX=false")), []string{"$.ok: true"}, ""},
		// A regular expression as the expected value.
		{"json regex", smp("s", "GET", "/x", "", el("JSONPathAssertion", "j", `JSON_PATH=$.id|JSONVALIDATION=true|EXPECTED_VALUE=\d+|ISREGEX=true`)), nil, "is a regular expression"},
		// The JSON Path plugin's extractor.
		{"jp@gc extractor", smp("s", "GET", "/x", "", el(tagJSONPath, "j", "VAR=id|JSONPATH=$.id|DEFAULT=0")) + smp("t", "GET", "/y/${id}", "", ""),
			[]string{"id: {json: $.id, default: 0}", "url: /y/{{id}}"}, ""},
		// A path with a wildcard.
		{"json wildcard", smp("s", "GET", "/x", "", el(tagJSONExtract, "j", "JSONPostProcessor.referenceNames=id|JSONPostProcessor.jsonPathExprs=$.items[*].id")), nil, "no wildcards"},
		// Regular expression extractor: the second match.
		{"regex match 2", smp("s", "GET", "/x", "", el(tagRegex, "r", `RegexExtractor.refname=v|RegexExtractor.regex=id=(\d+)|RegexExtractor.template=$1$|RegexExtractor.match_number=2|RegexExtractor.default=none`)),
			[]string{`v: {regex: id=(\d+), match: 2, default: none}`}, ""},
		// A random match.
		{"regex random", smp("s", "GET", "/x", "", el(tagRegex, "r", `RegexExtractor.refname=v|RegexExtractor.regex=id=(\d+)|RegexExtractor.template=$1$|RegexExtractor.match_number=0`)), nil, "not random (0)"},
		// The URL as the field to search.
		{"regex URL", smp("s", "GET", "/x", "", el(tagRegex, "r", `RegexExtractor.useHeaders=URL|RegexExtractor.refname=v|RegexExtractor.regex=x|RegexExtractor.template=$0$`)), nil, "only the body and the headers"},
		// ${__property(name,,default)} and names that need renaming.
		{"names", udv("client-id", "7", "user", "u") + smp("s", "GET", "/c/${client-id}/${user}/${__property(env,,dev)}", "", ""),
			[]string{"client_id: 7", "user_: u", "env: dev", "url: /c/{{client_id}}/{{user_}}/{{env}}"}, ""},
		// users = ${__P(users,10)}: the property gets its own variable, and
		// the thread group's ${users} is resolved through both.
		{"property idiom", udv("users", "${__P(users,3)}") + smp("s", "GET", "/u/${users}", "", ""),
			[]string{"users_prop: 3", `users: '{{users_prop}}'`, "url: /u/{{users}}"}, ""},
		// A variable nothing defines: JMeter would send it as is.
		{"undefined", smp("s", "GET", "/x/${nope}", "", "") + smp("t", "GET", "/x", "", ""), nil, "no element of the plan defines"},
		// Text holding {{, which would start a template.
		{"braces", smp("s", "GET", "/x/{{a}}", "", "") + smp("t", "GET", "/x", "", ""), nil, "holds '{{'"},
		// A Transaction Controller is not flattened.
		{"transaction", `<TransactionController testclass="TransactionController" testname="tx"/>
<hashTree>` + smp("in", "GET", "/in", "", "") + "</hashTree>\n" + smp("s", "GET", "/x", "", ""), nil, "a logic controller other than a Simple Controller"},
		// CSV per thread, not recycled.
		{"csv per thread", el("CSVDataSet", "c", "filename=clients.csv|shareMode=shareMode.thread|recycle=false|variableNames=balance,label|ignoreFirstLine=true") + smp("s", "GET", "/c/${balance}", "", ""),
			[]string{"share: user", "names: [balance, label]", "skip_first_line: true", "url: /c/{{balance}}"}, "recycle off"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			plan := filepath.Join(dir, "p.jmx")
			if err := os.WriteFile(plan, []byte(testPlan(tt.children)), 0o644); err != nil {
				t.Fatal(err)
			}
			csv, _ := os.ReadFile("testdata/clients.csv")
			if err := os.WriteFile(filepath.Join(dir, "clients.csv"), csv, 0o644); err != nil {
				t.Fatal(err)
			}
			data, _ := os.ReadFile(plan)
			res, err := Import(plan, data, Options{})
			if err != nil {
				t.Fatalf("import: %v", err)
			}
			sc := string(res.Scenario)
			for _, w := range tt.want {
				if !strings.Contains(sc, w) {
					t.Errorf("scenario lacks %q:\n%s", w, sc)
				}
			}
			var skipped []string
			for _, p := range res.Skipped {
				skipped = append(skipped, p.String())
			}
			all := strings.Join(skipped, "\n")
			switch {
			case tt.skip == "" && len(skipped) > 0:
				t.Errorf("skipped, want nothing:\n%s", all)
			case tt.skip != "" && !strings.Contains(all, tt.skip):
				t.Errorf("skipped list lacks %q:\n%s", tt.skip, all)
			}
		})
	}
}

func TestNotAPlan(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		// Not XML.
		{"text", "hello", "not a JMeter plan"},
		// Another root.
		{"root", "<project/>", "root element is not <jmeterTestPlan>"},
		// No thread group.
		{"no group", `<jmeterTestPlan><hashTree><TestPlan testname="t"/><hashTree/></hashTree></jmeterTestPlan>`, "no enabled Thread Group"},
	}
	for _, tt := range tests {
		_, err := Import(tt.name+".jmx", []byte(tt.data), Options{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestThreadsFromVariable(t *testing.T) {
	// The thread group reads ${users}, a User Defined Variable holding
	// ${__P(users,3)}: the load resolves both, and -J changes it.
	plan := strings.Replace(testPlan(udv("users", "${__P(users,3)}")+smp("s", "GET", "/x", "", "")),
		`<stringProp name="ThreadGroup.num_threads">1</stringProp>`, `<stringProp name="ThreadGroup.num_threads">${users}</stringProp>`, 1)
	for _, tt := range []struct {
		props map[string]string
		want  int
	}{{nil, 3}, {map[string]string{"users": "7"}, 7}} {
		res, err := Import("p.jmx", []byte(plan), Options{Properties: tt.props})
		if err != nil {
			t.Fatal(err)
		}
		if res.Load.Users != tt.want || len(res.Skipped) > 0 {
			t.Errorf("props %v: %d users, want %d; skipped %v", tt.props, res.Load.Users, tt.want, res.Skipped)
		}
	}
}
