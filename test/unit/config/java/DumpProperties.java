import java.io.FileInputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.util.Properties;
import java.util.TreeMap;

/** Prints, per file argument, one JSON line: the properties java.util.Properties loads, or {"error": ...}. */
public class DumpProperties {
  public static void main(String[] args) throws Exception {
    for (String path : args) {
      StringBuilder out = new StringBuilder("{");
      try (Reader reader = new InputStreamReader(new FileInputStream(path), StandardCharsets.UTF_8)) {
        Properties properties = new Properties();
        properties.load(reader);
        TreeMap<String, String> sorted = new TreeMap<>();
        for (String key : properties.stringPropertyNames()) sorted.put(key, properties.getProperty(key));
        String separator = "";
        for (var entry : sorted.entrySet()) {
          out.append(separator).append(quote(entry.getKey())).append(':').append(quote(entry.getValue()));
          separator = ",";
        }
      } catch (IllegalArgumentException error) {
        out.append("\"error\":").append(quote(String.valueOf(error.getMessage())));
      }
      System.out.println(out.append('}'));
    }
  }

  private static String quote(String text) {
    StringBuilder quoted = new StringBuilder("\"");
    for (char c : text.toCharArray()) {
      if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') quoted.append(String.format("\\u%04x", (int) c));
      else quoted.append(c);
    }
    return quoted.append('"').toString();
  }
}
