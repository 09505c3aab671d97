// The official A2A Java SDK (io.github.a2asdk 0.3.2.Final, A2A 0.3) as an interop peer:
// its own server (DefaultRequestHandler behind the SDK's JSONRPCHandler) and client
// (Client with the JSON-RPC transport), around the scenario scripts. No model, no
// network but loopback.
//
//   java -cp CLASSPATH Peer serve [--scenario NAME ...]   every scenario on its own port
//   java -cp CLASSPATH Peer client                         answers calls read from stdin
//
// The protocol on stdin/stdout is interop/python/harness.py's; the scripts come as JSON
// in PEER_SCRIPTS (interop/python/scripts.py). The SDK's server side ships no HTTP
// server of its own but a Quarkus one; this program routes JSON-RPC POSTs and the card
// with the JDK's HttpServer into the SDK's JSONRPCHandler, which does the rest (request
// parsing, task management, event aggregation, response types).
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.a2a.A2A;
import io.a2a.client.Client;
import io.a2a.client.ClientEvent;
import io.a2a.client.MessageEvent;
import io.a2a.client.TaskEvent;
import io.a2a.client.TaskUpdateEvent;
import io.a2a.client.config.ClientConfig;
import io.a2a.client.http.A2AHttpClient;
import io.a2a.client.http.JdkA2AHttpClient;
import io.a2a.client.transport.jsonrpc.JSONRPCTransport;
import io.a2a.client.transport.jsonrpc.JSONRPCTransportConfig;
import io.a2a.server.ServerCallContext;
import io.a2a.server.TransportMetadata;
import io.a2a.server.agentexecution.AgentExecutor;
import io.a2a.server.agentexecution.RequestContext;
import io.a2a.server.auth.UnauthenticatedUser;
import io.a2a.server.events.EventQueue;
import io.a2a.server.events.InMemoryQueueManager;
import io.a2a.server.requesthandlers.DefaultRequestHandler;
import io.a2a.server.tasks.BasePushNotificationSender;
import io.a2a.server.tasks.InMemoryPushNotificationConfigStore;
import io.a2a.server.tasks.InMemoryTaskStore;
import io.a2a.spec.AgentCapabilities;
import io.a2a.spec.AgentCard;
import io.a2a.spec.AgentSkill;
import io.a2a.spec.Artifact;
import io.a2a.spec.CancelTaskRequest;
import io.a2a.spec.DataPart;
import io.a2a.spec.GetTaskRequest;
import io.a2a.spec.Message;
import io.a2a.spec.Part;
import io.a2a.spec.SendMessageRequest;
import io.a2a.spec.SendStreamingMessageRequest;
import io.a2a.spec.Task;
import io.a2a.spec.TaskArtifactUpdateEvent;
import io.a2a.spec.TaskState;
import io.a2a.spec.TaskStatus;
import io.a2a.spec.TaskStatusUpdateEvent;
import io.a2a.spec.TextPart;
import io.a2a.transport.jsonrpc.handler.JSONRPCHandler;
import io.a2a.util.Utils;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.Field;
import java.net.InetSocketAddress;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;

public final class Peer {
    private static final ObjectMapper JSON = Utils.OBJECT_MAPPER;
    private static final ExecutorService POOL = Executors.newCachedThreadPool();

    public static void main(String[] args) throws Exception {
        JsonNode scripts = JSON.readTree(System.getenv().getOrDefault("PEER_SCRIPTS", ""));
        if (scripts == null || !scripts.isObject()) {
            System.err.println("PEER_SCRIPTS is not set: run with PEER_SCRIPTS=\"$(python3 ../python/scripts.py)\"");
            System.exit(2);
        }
        String command = args.length > 0 ? args[0] : "";
        if (command.equals("serve")) {
            serve(scripts, scenarioNames(args, scripts));
        } else if (command.equals("client")) {
            clientLoop();
        } else {
            System.err.println("usage: Peer serve [--scenario NAME ...] | client");
            System.exit(2);
        }
    }

    private static List<String> scenarioNames(String[] args, JsonNode scripts) {
        List<String> names = new ArrayList<>();
        for (int i = 1; i + 1 < args.length; i++) {
            if (args[i].equals("--scenario")) {
                names.add(args[++i]);
            }
        }
        if (names.isEmpty()) {
            scripts.fieldNames().forEachRemaining(names::add);
        }
        return new ArrayList<>(new TreeSet<>(names));
    }

    // --- server ------------------------------------------------------------------------

    /** Replays one script: each step's chunks as artifact updates under its response id,
     * then the complete response replacing them (README.md, "Scenarios on the wire"). */
    static final class ScriptedAgent implements AgentExecutor {
        private final JsonNode script;

        ScriptedAgent(JsonNode script) {
            this.script = script;
        }

        @Override
        public void execute(RequestContext context, EventQueue queue) {
            String taskId = context.getTaskId();
            String contextId = context.getContextId();
            if (context.getTask() == null) {
                queue.enqueueEvent(new Task.Builder().id(taskId).contextId(contextId)
                        .status(new TaskStatus(TaskState.SUBMITTED)).history(context.getMessage()).build());
            }
            queue.enqueueEvent(status(taskId, contextId, TaskState.WORKING, null, false));
            JsonNode previous = null;
            for (JsonNode step : script.get("steps")) {
                if (previous != null && previous.get("calls").size() > 0) {
                    List<Part<?>> results = new ArrayList<>();
                    previous.get("calls").forEach(call -> results.add(resultPart(call)));
                    queue.enqueueEvent(artifact(taskId, contextId, UUID.randomUUID().toString(), results, false, true));
                }
                String id = step.get("response_id").asText();
                boolean sent = false;
                StringBuilder reasoning = new StringBuilder();
                StringBuilder text = new StringBuilder();
                for (JsonNode piece : step.get("reasoning")) {
                    reasoning.append(piece.asText());
                    queue.enqueueEvent(artifact(taskId, contextId, id, List.of(thought(piece.asText())), sent, false));
                    sent = true;
                }
                for (JsonNode piece : step.get("chunks")) {
                    text.append(piece.asText());
                    queue.enqueueEvent(artifact(taskId, contextId, id, List.of(new TextPart(piece.asText())), sent, false));
                    sent = true;
                }
                JsonNode error = step.get("error");
                if (error != null && !error.isNull()) {
                    Message message = new Message.Builder().role(Message.Role.AGENT)
                            .messageId(UUID.randomUUID().toString()).taskId(taskId).contextId(contextId)
                            .parts(new TextPart(error.get(1).asText())).build();
                    queue.enqueueEvent(status(taskId, contextId, TaskState.FAILED, message, true));
                    return;
                }
                List<Part<?>> parts = new ArrayList<>();
                if (reasoning.length() > 0) {
                    parts.add(thought(reasoning.toString()));
                }
                if (text.length() > 0) {
                    parts.add(new TextPart(text.toString()));
                }
                step.get("calls").forEach(call -> parts.add(callPart(call)));
                queue.enqueueEvent(artifact(taskId, contextId, id, parts, false, true));
                previous = step;
            }
            queue.enqueueEvent(status(taskId, contextId, TaskState.COMPLETED, null, true));
        }

        @Override
        public void cancel(RequestContext context, EventQueue queue) {
            queue.enqueueEvent(status(context.getTaskId(), context.getContextId(), TaskState.CANCELED, null, true));
        }
    }

    private static TextPart thought(String text) {
        return new TextPart(text, Map.of("thought", true));
    }

    // A2A has no tool-call part: the DataPart conventions of docs/specs/trpc-interaction.md §0.4.
    private static DataPart callPart(JsonNode call) {
        Map<String, Object> data = new LinkedHashMap<>();
        data.put("id", call.get("id").asText());
        data.put("name", call.get("name").asText());
        data.put("args", call.get("args").toString());
        return new DataPart(data, Map.of("type", "function_call"));
    }

    private static DataPart resultPart(JsonNode call) {
        Map<String, Object> data = new LinkedHashMap<>();
        data.put("id", call.get("id").asText());
        data.put("name", call.get("name").asText());
        data.put("response", call.get("result").toString());
        return new DataPart(data, Map.of("type", "function_response"));
    }

    private static TaskArtifactUpdateEvent artifact(
            String taskId, String contextId, String artifactId, List<Part<?>> parts, boolean append, boolean last) {
        Artifact artifact = new Artifact(artifactId, null, null, parts, null, null);
        return new TaskArtifactUpdateEvent(taskId, artifact, contextId, append, last, null);
    }

    private static TaskStatusUpdateEvent status(
            String taskId, String contextId, TaskState state, Message message, boolean last) {
        return new TaskStatusUpdateEvent(taskId, new TaskStatus(state, message, null), contextId, last, null);
    }

    private static AgentCard card(String url) {
        AgentSkill skill = new AgentSkill.Builder().id("weather").name("weather")
                .description("Scripted scenario").tags(List.of("weather")).build();
        return new AgentCard.Builder().name("weather_agent")
                .description("A2A Java SDK interop scenario agent").url(url).version("1.0.0")
                .protocolVersion("0.3.0").preferredTransport("JSONRPC")
                .capabilities(new AgentCapabilities.Builder().streaming(true).build())
                .defaultInputModes(List.of("text")).defaultOutputModes(List.of("text"))
                .skills(List.of(skill)).build();
    }

    private static void serve(JsonNode scripts, List<String> names) throws Exception {
        for (String name : names) {
            HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
            String url = "http://127.0.0.1:" + server.getAddress().getPort() + "/";
            AgentCard card = card(url);
            InMemoryTaskStore tasks = new InMemoryTaskStore();
            InMemoryPushNotificationConfigStore pushes = new InMemoryPushNotificationConfigStore();
            DefaultRequestHandler requests = DefaultRequestHandler.create(new ScriptedAgent(scripts.get(name)),
                    tasks, new InMemoryQueueManager(tasks), pushes, new BasePushNotificationSender(pushes), POOL);
            JSONRPCHandler handler = new JSONRPCHandler(card, requests, POOL);
            server.createContext("/.well-known/agent-card.json", exchange -> {
                reply(exchange, 200, "application/json", JSON.writeValueAsString(card));
            });
            server.createContext("/", exchange -> route(handler, exchange));
            server.setExecutor(POOL);
            server.start();
            System.out.println("READY " + name + " " + url);
        }
        System.out.println("READY all");
        System.out.flush();
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        while (stdin.readLine() != null) {
            // serve until the process that started this one closes stdin
        }
        System.exit(0);
    }

    /** One JSON-RPC POST into the SDK's handler: streamed methods as SSE. */
    private static void route(JSONRPCHandler handler, HttpExchange exchange) throws IOException {
        try {
            if (!exchange.getRequestMethod().equals("POST")) {
                reply(exchange, 405, "text/plain", "POST only");
                return;
            }
            JsonNode body = JSON.readTree(exchange.getRequestBody());
            ServerCallContext context = new ServerCallContext(UnauthenticatedUser.INSTANCE, new HashMap<>(), new HashSet<>());
            String method = body.path("method").asText();
            Object answer;
            switch (method) {
                case "message/stream" -> {
                    stream(exchange, handler.onMessageSendStream(JSON.treeToValue(body, SendStreamingMessageRequest.class), context));
                    return;
                }
                case "message/send" -> answer = handler.onMessageSend(JSON.treeToValue(body, SendMessageRequest.class), context);
                case "tasks/get" -> answer = handler.onGetTask(JSON.treeToValue(body, GetTaskRequest.class), context);
                case "tasks/cancel" -> answer = handler.onCancelTask(JSON.treeToValue(body, CancelTaskRequest.class), context);
                default -> answer = Map.of("jsonrpc", "2.0", "id", body.path("id"),
                        "error", Map.of("code", -32601, "message", "Method not found"));
            }
            reply(exchange, 200, "application/json", JSON.writeValueAsString(answer));
        } catch (Exception exc) {
            reply(exchange, 200, "application/json", JSON.writeValueAsString(Map.of("jsonrpc", "2.0",
                    "error", Map.of("code", -32600, "message", "Invalid request: " + exc.getClass().getSimpleName()))));
        }
    }

    private static void stream(HttpExchange exchange, Flow.Publisher<?> events) throws Exception {
        exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
        exchange.sendResponseHeaders(200, 0);
        OutputStream out = exchange.getResponseBody();
        CountDownLatch done = new CountDownLatch(1);
        events.subscribe(new Flow.Subscriber<Object>() {
            @Override
            public void onSubscribe(Flow.Subscription subscription) {
                subscription.request(Long.MAX_VALUE);
            }

            @Override
            public void onNext(Object item) {
                try {
                    out.write(("data: " + JSON.writeValueAsString(item) + "\n\n").getBytes(StandardCharsets.UTF_8));
                    out.flush();
                } catch (IOException exc) {
                    done.countDown();
                }
            }

            @Override
            public void onError(Throwable error) {
                done.countDown();
            }

            @Override
            public void onComplete() {
                done.countDown();
            }
        });
        done.await(120, TimeUnit.SECONDS);
        out.close();
    }

    private static void reply(HttpExchange exchange, int code, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", type);
        exchange.sendResponseHeaders(code, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    /** What the SDK's card validator asks the classpath for: the transports served. This
     * program serves JSON-RPC (META-INF/services registers this class). */
    public static final class JsonRpcTransport implements TransportMetadata {
        @Override
        public String getTransportProtocol() {
            return "JSONRPC";
        }
    }

    // --- client ------------------------------------------------------------------------

    private static void clientLoop() throws Exception {
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintWriter stdout = new PrintWriter(System.out, true, StandardCharsets.UTF_8);
        String line;
        while ((line = stdin.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            JsonNode request = JSON.readTree(line);
            Map<String, Object> answer;
            try {
                answer = Map.of("events", call(request.get("url").asText(), request.path("message").asText("hi"),
                        request.path("session").asText("peer-session"), request.path("stream").asBoolean(true),
                        request.path("h2c").asBoolean(false)));
            } catch (Exception exc) {
                StringWriter trace = new StringWriter();
                exc.printStackTrace(new PrintWriter(trace));
                answer = Map.of("error", exc.getClass().getSimpleName() + ": " + exc.getMessage(), "trace", trace.toString());
            }
            stdout.println(JSON.writeValueAsString(answer));
        }
        System.exit(0);
    }

    /** The SDK's HTTP client on HTTP/1.1. Its default asks every plain-HTTP request to
     * upgrade to h2c, and the bridge's HTTP server then loses the request's body (the
     * strict xfail in tests/interop/test_sdk_peers.py; a call with "h2c": true keeps the
     * default). The SDK has no setting for it: its private HttpClient is replaced. */
    private static A2AHttpClient http11() throws ReflectiveOperationException {
        JdkA2AHttpClient client = new JdkA2AHttpClient();
        Field field = JdkA2AHttpClient.class.getDeclaredField("httpClient");
        field.setAccessible(true);
        field.set(client, HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .followRedirects(HttpClient.Redirect.NORMAL).build());
        return client;
    }

    /** One call; every event the SDK's client hands its consumer, in the SDK's JSON (for a
     * task update, the update event itself, not the SDK's running aggregate of the task). */
    private static List<Object> call(String url, String text, String session, boolean stream, boolean h2c)
            throws Exception {
        A2AHttpClient http = h2c ? new JdkA2AHttpClient() : http11();
        AgentCard card = A2A.getAgentCard(http, url);
        List<Object> events = new ArrayList<>();
        CompletableFuture<Void> done = new CompletableFuture<>();
        ClientConfig config = new ClientConfig.Builder().setStreaming(stream).build();
        Client client = Client.builder(card).clientConfig(config)
                .withTransport(JSONRPCTransport.class, new JSONRPCTransportConfig(http))
                .addConsumer((ClientEvent event, AgentCard ignored) -> {
                    synchronized (events) {
                        if (event instanceof MessageEvent message) {
                            events.add(message.getMessage());
                            done.complete(null);
                        } else if (event instanceof TaskEvent task) {
                            events.add(task.getTask());
                            if (task.getTask().getStatus().state().isFinal()) {
                                done.complete(null);
                            }
                        } else if (event instanceof TaskUpdateEvent update) {
                            events.add(update.getUpdateEvent());
                            if (update.getTask().getStatus().state().isFinal()) {
                                done.complete(null);
                            }
                        }
                    }
                })
                .streamingErrorHandler(done::completeExceptionally)
                .build();
        try {
            Message message = new Message.Builder().role(Message.Role.USER).messageId(UUID.randomUUID().toString())
                    .contextId(session).parts(new TextPart(text)).build();
            client.sendMessage(message, null);
            done.get(120, TimeUnit.SECONDS);
        } finally {
            client.close();
        }
        synchronized (events) {
            return new ArrayList<>(events);
        }
    }
}
