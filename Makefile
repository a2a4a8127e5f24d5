# The two commands a newcomer needs are `make run` and `make test`; both
# install what they need first.
GO ?= go
BIN := bin/showdown

.PHONY: run test setup build bench clean

setup:
	@bash scripts/setup.sh

build:
	$(GO) build -o $(BIN) ./cmd/showdown

run: setup build
	$(BIN) run plans/default.yaml

test: setup
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 40m ./...
	$(GO) test -run '^$$' -fuzz '^FuzzRespParser$$' -fuzztime 15s ./load
	$(GO) test -run '^$$' -fuzz '^FuzzRespParserNetHTTP$$' -fuzztime 15s ./load
	cd services/go-stdlib && $(GO) vet ./... && $(GO) test -count=1 ./...
	cd services/node-http && npm ci --no-audit --no-fund --loglevel=error && npm test
	# The venv is the service's build output, made by TestConformance above.
	cd services/python-fastapi && .venv/bin/python -m unittest discover -s tests

clean:
	rm -rf bin
