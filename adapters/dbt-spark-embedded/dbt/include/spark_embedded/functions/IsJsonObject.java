package cdc.lakehouse.functions;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import java.io.IOException;
import org.apache.hadoop.hive.ql.exec.UDF;

/**
 * SQL function {@code cdc_is_json_object(text)}: whether {@code text} is exactly one JSON value
 * as RFC 8259 defines it, and that value is an object; null for null.
 *
 * <p>Spark's JSON functions are lenient (single quotes, unquoted field names, NaN, comments and
 * trailing text after the first value are accepted), so they cannot tell a producer's malformed
 * message from a good one. This check reads the text once with Jackson's streaming tokenizer in
 * its default, strict settings, building nothing: linear time in the text's length, and nesting
 * deeper than 1,000 levels or a number of more than 4,300 digits counts as not JSON (no deeper
 * stack and no longer number is accepted). It runs in the JVM beside Spark's own functions.
 *
 * <p>Registered per session by the macro {@code create_cdc_functions} (macros/platform/functions.sql);
 * set-up compiles it into the jar cache, and every session of the lakehouse has that jar
 * ({@code dbt.adapters.spark_embedded.functions}).
 */
@SuppressWarnings("deprecation")
public final class IsJsonObject extends UDF {
    private static final JsonFactory STRICT = JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder()
                    .maxNestingDepth(1000)
                    .maxNumberLength(4300)
                    .maxStringLength(Integer.MAX_VALUE)
                    .build())
            .build();

    public Boolean evaluate(String text) {
        if (text == null) {
            return null;
        }
        try (JsonParser parser = STRICT.createParser(text)) {
            if (parser.nextToken() != JsonToken.START_OBJECT) {
                return false;
            }
            parser.skipChildren(); // tokenizes (and so validates) everything up to the object's end
            return parser.nextToken() == null; // nothing but whitespace after it
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }
}
