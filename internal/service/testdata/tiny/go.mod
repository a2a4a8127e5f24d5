module tiny

go 1.22
