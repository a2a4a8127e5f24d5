package dev.showdown.helidon;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.logging.Formatter;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Logs configures java.util.logging, the logging Helidon itself uses (through System.Logger; HikariCP
 * comes through SLF4J's JUL binding), to write one JSON object per line on stdout: time, level,
 * logger and message, plus the key-value pairs a record carries as parameters. The root level is
 * WARNING, the service's own loggers INFO.
 */
public final class Logs {

    /** REQUEST is the logger of the per-request lines (LOG_REQUESTS=true). */
    public static final Logger REQUEST = Logger.getLogger("http.request");

    /** APP is the service's own logger: the ready line, errors. */
    public static final Logger APP = Logger.getLogger("dev.showdown.helidon");

    private Logs() {}

    /** configure replaces JUL's console handler with the JSON line handler on stdout. */
    public static void configure() {
        LogManager.getLogManager().reset();
        Logger root = Logger.getLogger("");
        root.setLevel(Level.WARNING);
        root.addHandler(new JsonLines(System.out));
        REQUEST.setLevel(Level.INFO);
        APP.setLevel(Level.INFO);
    }

    /** info logs message at INFO with key-value pairs kv (key, value, key, value, ...). */
    public static void info(Logger logger, String message, Object... kv) {
        log(logger, Level.INFO, message, kv);
    }

    /** log logs message at level with key-value pairs kv (key, value, key, value, ...). */
    public static void log(Logger logger, Level level, String message, Object... kv) {
        LogRecord r = new LogRecord(level, message);
        r.setLoggerName(logger.getName());
        r.setParameters(kv);
        logger.log(r);
    }

    /** JsonLines writes each record as one JSON line and flushes it. */
    static final class JsonLines extends Handler {

        private final PrintStream out;

        JsonLines(PrintStream out) {
            this.out = out;
            setFormatter(new JsonFormatter());
        }

        @Override
        public void publish(LogRecord record) {
            if (isLoggable(record)) {
                byte[] line = getFormatter().format(record).getBytes(StandardCharsets.UTF_8);
                synchronized (out) {
                    out.write(line, 0, line.length);
                    out.flush();
                }
            }
        }

        @Override
        public void flush() {
            out.flush();
        }

        @Override
        public void close() {
            flush();
        }
    }

    /** JsonFormatter formats a record as {"time":...,"level":...,"logger":...,"message":...,k:v...}. */
    static final class JsonFormatter extends Formatter {

        @Override
        public String format(LogRecord r) {
            StringBuilder b = new StringBuilder(160);
            b.append("{\"time\":\"").append(Instant.ofEpochMilli(r.getMillis())).append('"');
            b.append(",\"level\":\"").append(r.getLevel().getName()).append('"');
            field(b, "logger", r.getLoggerName());
            String message = r.getMessage();
            Object[] kv = r.getParameters();
            boolean pairs = kv != null && kv.length % 2 == 0 && (kv.length == 0 || kv[0] instanceof String);
            if (!pairs) {
                message = formatMessage(r); // a library's {0}-style message
            }
            field(b, "message", message);
            if (pairs) {
                for (int i = 0; i + 1 < kv.length; i += 2) {
                    Object v = kv[i + 1];
                    if (v instanceof Number || v instanceof Boolean) {
                        b.append(",\"").append(kv[i]).append("\":").append(v);
                    } else {
                        field(b, String.valueOf(kv[i]), String.valueOf(v));
                    }
                }
            }
            if (r.getThrown() != null) {
                StringWriter w = new StringWriter();
                r.getThrown().printStackTrace(new PrintWriter(w));
                field(b, "error", w.toString());
            }
            return b.append("}\n").toString();
        }

        private static void field(StringBuilder b, String key, String value) {
            b.append(",\"").append(key).append("\":");
            Json.quote(b, value == null ? "" : value);
        }
    }
}
