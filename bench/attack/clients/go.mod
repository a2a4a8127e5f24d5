module github.com/showdownlab/showdown/bench/attack/clients

go 1.26.0

require (
	github.com/showdownlab/showdown v0.0.0
	github.com/valyala/fasthttp v1.58.0
)

require (
	github.com/HdrHistogram/hdrhistogram-go v1.4.0 // indirect
	github.com/andybalholm/brotli v1.1.1 // indirect
	github.com/klauspost/compress v1.17.11 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
)

replace github.com/showdownlab/showdown => ../../..
