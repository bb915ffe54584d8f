package cdc.lakehouse.functions;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import java.io.IOException;
import java.io.StringWriter;
import org.apache.hadoop.hive.ql.exec.UDF;

/**
 * SQL function {@code cdc_json_numbers_as_text(text)}: the same JSON with every number written as
 * a string of exactly the digits the text had ({@code 17520.00} becomes {@code "17520.00"}); the
 * text unchanged when it is not strict JSON; null for null.
 *
 * <p>Spark's {@code from_json} reads a JSON number into a string field through a double, so
 * {@code 17520.00} comes back as {@code 17520.0} and a number of more than about 15 significant
 * digits is rounded; {@code get_json_object} and {@code json_tuple} do the same, and a variant
 * drops trailing zeros. A producer that sends decimals as JSON numbers (Oracle GoldenGate's JSON
 * formatter) would so lose the value's scale or its digits. Given this function's output,
 * {@code from_json} reads each number's text as the producer wrote it.
 *
 * <p>One pass with Jackson's streaming tokenizer and generator: linear time in the text's length.
 * Strings, names and structure are copied token by token (a string's escapes may be written
 * differently, with the same value); repeated names are kept. Text that strict JSON rejects
 * (single quotes, NaN, comments, nesting deeper than 1,000 levels, a truncated message) is
 * returned as it is, so Spark's own lenient parser sees exactly what it saw without this
 * function.
 *
 * <p>Registered per session by the macro {@code create_cdc_function} (macros/platform/functions.sql);
 * set-up compiles it into the jar cache with {@code IsJsonObject} beside it.
 */
@SuppressWarnings("deprecation")
public final class JsonNumbersAsText extends UDF {
    private static final JsonFactory STRICT = JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder()
                    .maxNestingDepth(1000)
                    .maxNumberLength(Integer.MAX_VALUE) // only copied as text, never converted
                    .maxStringLength(Integer.MAX_VALUE)
                    .build())
            .build();

    public String evaluate(String text) {
        if (text == null) {
            return null;
        }
        StringWriter out = new StringWriter(text.length() + 64);
        try (JsonParser parser = STRICT.createParser(text);
                JsonGenerator generator = STRICT.createGenerator(out)) {
            JsonToken token;
            while ((token = parser.nextToken()) != null) {
                if (token == JsonToken.VALUE_NUMBER_INT || token == JsonToken.VALUE_NUMBER_FLOAT) {
                    generator.writeString(parser.getText());
                } else {
                    generator.copyCurrentEvent(parser);
                }
            }
            generator.flush();
        } catch (IOException | RuntimeException e) {
            return text;
        }
        return out.toString();
    }
}
