# jdk.sh is sourced by build.sh and run.sh: it sets JAVA_HOME to a JDK >= 21, preferring $JAVA_HOME,
# else the newest /usr/lib/jvm/* that qualifies (the machine's default java may be 17).
java_major() { # prints the major version of the JDK at $1, or nothing
  local rel="$1/release" v
  [ -x "$1/bin/java" ] || return 0
  if [ -r "$rel" ]; then
    v=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$rel")
  else
    v=$("$1/bin/java" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n1)
  fi
  echo "$v"
}

pick_jdk() {
  local want=21 best="" best_v=0 d v
  if [ -n "${JAVA_HOME:-}" ]; then
    v=$(java_major "$JAVA_HOME")
    if [ -n "$v" ] && [ "$v" -ge "$want" ]; then return 0; fi
  fi
  for d in /usr/lib/jvm/*; do
    v=$(java_major "$d")
    if [ -n "$v" ] && [ "$v" -ge "$want" ] && [ "$v" -gt "$best_v" ]; then best=$d best_v=$v; fi
  done
  if [ -z "$best" ]; then
    echo "java-micronaut: no JDK >= $want found (JAVA_HOME=${JAVA_HOME:-unset}, /usr/lib/jvm/*)" >&2
    echo "hint: install Temurin 25 (or any JDK >= 21) and set JAVA_HOME to it" >&2
    exit 1
  fi
  export JAVA_HOME="$best"
}

pick_jdk
