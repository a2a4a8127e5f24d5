#!/usr/bin/env python3
"""jfr-cpu.py prints where a JFR recording's CPU samples went: by thread kind, by the leaf frame's
owner (self time) and by the owners present anywhere on the stack (inclusive), plus GC pauses.

Usage: measure/jfr-cpu.py RECORDING.jfr [LEAF-SUBSTRING]  (needs the JDK's jfr tool: $JAVA_HOME/bin/jfr or PATH)
"""
import collections, json, os, shutil, subprocess, sys

OWNERS = [  # (label, frame prefixes), first match wins
    ("service code", ("dev.showdown.",)),
    ("metrics (Prometheus client)", ("io.prometheus.",)),
    ("JSON (Jackson)", ("com.fasterxml.jackson.",)),
    ("logging (JUL)", ("java.util.logging.",)),
    ("Helidon", ("io.helidon.",)),
    ("JDBC + pool", ("org.postgresql.", "org.mariadb.", "com.zaxxer.")),
    ("strings (JDK)", ("java.lang.String", "java.lang.Character", "java.lang.CharacterData", "java.lang.AbstractStringBuilder", "java.lang.StringBuilder", "java.lang.ConditionalSpecialCasing", "sun.nio.cs.")),
    ("sockets (JDK)", ("sun.nio.ch.", "java.net.", "java.io.", "sun.net.")),
    ("virtual threads + locks (JDK)", ("java.lang.VirtualThread", "jdk.internal.vm.", "java.util.concurrent.", "java.lang.Thread", "jdk.internal.misc.")),
]


def owner(frame):
    for label, prefixes in OWNERS:
        if frame.startswith(prefixes):
            return label
    return "other JDK / JVM" if frame.startswith(("java.", "jdk.", "sun.")) else "other"


def events(jfr, path, name):
    out = subprocess.run([jfr, "print", "--json", "--stack-depth", "64", "--events", name, path],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["recording"]["events"]


def frame_name(f):
    m = f["method"]
    return m["type"]["name"].replace("/", ".") + "." + m["name"]


def main():
    path = sys.argv[1]
    home = os.environ.get("JAVA_HOME", "/usr/lib/jvm/temurin-25-jdk-amd64")
    jfr = os.path.join(home, "bin", "jfr") if os.path.exists(os.path.join(home, "bin", "jfr")) else shutil.which("jfr")
    samples = events(jfr, path, "jdk.ExecutionSample")
    n = len(samples)
    self_owner, incl_owner, leaf = collections.Counter(), collections.Counter(), collections.Counter()
    for s in samples:
        frames = [frame_name(f) for f in s["values"]["stackTrace"]["frames"]]
        if not frames:
            continue
        self_owner[owner(frames[0])] += 1
        leaf[frames[0]] += 1
        for o in {owner(f) for f in frames}:
            incl_owner[o] += 1
    print(f"{path}: {n} execution samples (Java frames only)")
    print("\nself (leaf frame's owner):")
    for o, c in self_owner.most_common():
        print(f"  {100*c/n:5.1f}%  {o}")
    print("\ninclusive (owner anywhere on the stack):")
    for o, c in incl_owner.most_common():
        print(f"  {100*c/n:5.1f}%  {o}")
    print("\ntop leaf methods:")
    for f, c in leaf.most_common(25):
        print(f"  {100*c/n:5.1f}%  {f}")
    loads = collections.defaultdict(list)
    for e in events(jfr, path, "jdk.ThreadCPULoad"):
        v = e["values"]
        name = (v.get("eventThread") or {}).get("javaName") or (v.get("eventThread") or {}).get("osName") or "?"
        loads[name].append(v["user"] + v["system"])
    print("\nCPU by thread (mean of jdk.ThreadCPULoad, share of the machine's CPUs):")
    for name, xs in sorted(loads.items(), key=lambda kv: -sum(kv[1]) / len(kv[1]))[:12]:
        print(f"  {100*sum(xs)/len(xs):5.1f}%  {name}")
    gcs = events(jfr, path, "jdk.GarbageCollection")
    pause = sum(iso_seconds(g["values"]["sumOfPauses"]) for g in gcs)
    print(f"\nGC: {len(gcs)} collections ({', '.join(sorted({g['values']['name'] for g in gcs}))}), "
          f"{1000*pause:.1f} ms of pauses in all")
    if len(sys.argv) > 2:  # callers of the leaf methods matching argv[2]
        callers = collections.Counter()
        for s in samples:
            frames = [frame_name(f) for f in s["values"]["stackTrace"]["frames"]]
            if frames and sys.argv[2] in frames[0]:
                callers[" <- ".join(frames[:8])] += 1
        print(f"\nstacks of leaf methods matching {sys.argv[2]!r}:")
        for st, c in callers.most_common(8):
            print(f"  {c:4d}  {st}")


def iso_seconds(v):
    """iso_seconds reads a JFR duration printed as ISO-8601 (PT0.0123S) or a number of nanoseconds."""
    if isinstance(v, (int, float)):
        return v / 1e9
    v = str(v)
    if v.startswith("PT") and v.endswith("S"):
        return float(v[2:-1])
    return 0.0


if __name__ == "__main__":
    main()
