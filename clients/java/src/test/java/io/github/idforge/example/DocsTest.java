package io.github.idforge.example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.idforge.client.IdForge;
import io.github.idforge.client.Servers;
import java.io.StringWriter;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;

/** The Java programs of docs/clients.md and its Chinese twin compile against the client as it is. */
class DocsTest {
    private static final Pattern JAVA_BLOCK = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL);

    @Test
    void examplesCompile() throws Exception {
        Path docs = Servers.conformanceDir().resolve("../../docs").normalize();
        for (Path doc : List.of(docs.resolve("clients.md"), docs.resolve("zh-CN/clients.md"))) {
            Matcher m = JAVA_BLOCK.matcher(Files.readString(doc, StandardCharsets.UTF_8));
            List<JavaFileObject> sources = new ArrayList<>();
            while (m.find()) {
                String code = m.group(1);
                Matcher cls = Pattern.compile("public class (\\w+)").matcher(code);
                assertTrue(cls.find(), doc + ": a Java block without a public class");
                sources.add(new SimpleJavaFileObject(URI.create("string:///" + cls.group(1) + ".java"), JavaFileObject.Kind.SOURCE) {
                    @Override
                    public CharSequence getCharContent(boolean ignoreEncodingErrors) {
                        return code;
                    }
                });
            }
            assertEquals(1, sources.size(), doc + ": Java programs");
            // The client's classes where the test runs them from (the console
            // launcher's -cp is not java.class.path).
            String client = Path.of(IdForge.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
            JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
            Path out = Files.createTempDirectory("idforge-docs");
            StringWriter errors = new StringWriter();
            boolean ok = javac.getTask(errors, null, null,
                    List.of("--release", "11", "-d", out.toString(), "-cp", client),
                    null, sources).call();
            assertTrue(ok, doc + ": " + errors);
            try (var files = Files.walk(out)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            }
        }
    }
}
