using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using Broker.Compare.Servers;

namespace Broker.Compare.Mqtt;

/// <summary>
/// One MQTT server under test as a child process on loopback: our host with the MQTT plugin, nats-server (MQTT needs
/// JetStream and a server name there) or Mosquitto. Ready once its MQTT port accepts; killed when disposed.
/// </summary>
internal sealed class MqttServer : IDisposable
{
    private static readonly TimeSpan StartTimeout = TimeSpan.FromSeconds(30);

    private readonly Process process;
    private readonly string directory;

    private MqttServer(string name, Process process, IPEndPoint mqtt, IPEndPoint? nats, string directory)
    {
        Name = name;
        this.process = process;
        Mqtt = mqtt;
        Nats = nats;
        this.directory = directory;
    }

    /// <summary>The ports a configuration written by <see cref="StartOnConfig"/> listens on, and its directory.</summary>
    public sealed record ConfigPorts(int Nats, int Mqtt, int WebSocket, int Monitor, string Directory);

    public string Name { get; }

    public IPEndPoint Mqtt { get; }

    /// <summary>The NATS port, for servers that have one.</summary>
    public IPEndPoint? Nats { get; }

    /// <summary>The WebSocket port, when the server was started on a configuration that opens one.</summary>
    public IPEndPoint? WebSocket { get; private init; }

    /// <summary>The monitoring (HTTP) port, when the server was started on a configuration that opens one.</summary>
    public IPEndPoint? Monitor { get; private init; }

    public int ProcessId => process.Id;

    /// <summary>Whether the server process has ended.</summary>
    public bool HasExited => process.HasExited;

    private readonly Queue<string> tail = new();

    /// <summary>The last lines the server printed, for error messages.</summary>
    public string OutputTail
    {
        get
        {
            lock (tail)
            {
                return string.Join(Environment.NewLine, tail);
            }
        }
    }

    private void Keep(string? line)
    {
        if (line is null)
        {
            return;
        }

        lock (tail)
        {
            tail.Enqueue(line);
            if (tail.Count > 20)
            {
                tail.Dequeue();
            }
        }
    }

    /// <summary>Resident memory of the server process, from /proc (bytes).</summary>
    public long ResidentBytes
    {
        get
        {
            foreach (var line in File.ReadLines($"/proc/{process.Id}/status"))
            {
                if (line.StartsWith("VmRSS:", StringComparison.Ordinal))
                {
                    return long.Parse(line[6..].Trim().Split(' ')[0], CultureInfo.InvariantCulture) * 1024;
                }
            }

            return 0;
        }
    }

    public static MqttServer StartOurs(string hostDll)
    {
        var (nats, mqtt) = (FreePort(), FreePort());
        var directory = Directory.CreateTempSubdirectory("mqtt-ours-").FullName;
        var start = new ProcessStartInfo("dotnet") { UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardError = true };

        // JetStream on the file store, as nats-server runs MQTT: QoS 1 and 2 go through $MQTT_msgs on both.
        foreach (var arg in new[] { hostDll, "-a", "127.0.0.1", "-p", nats.ToString(CultureInfo.InvariantCulture), "-js", "-sd", Path.Combine(directory, "js") })
        {
            start.ArgumentList.Add(arg);
        }

        start.Environment["BROKER_PLUGINS__MQTT__HOST"] = "127.0.0.1";
        start.Environment["BROKER_PLUGINS__MQTT__PORT"] = mqtt.ToString(CultureInfo.InvariantCulture);
        return Start("ours", start, mqtt, nats, directory);
    }

    public static MqttServer StartNatsServer(string natsServerPath)
    {
        var (nats, mqtt) = (FreePort(), FreePort());
        var directory = Directory.CreateTempSubdirectory("mqtt-nats-").FullName;
        var config = Path.Combine(directory, "nats.conf");
        File.WriteAllText(config, $$"""
            listen: 127.0.0.1:{{nats}}
            server_name: mqtt_bench
            jetstream { store_dir: "{{Path.Combine(directory, "js")}}" }
            mqtt { listen: 127.0.0.1:{{mqtt}} }
            """);
        var start = new ProcessStartInfo(natsServerPath) { UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardError = true };
        start.ArgumentList.Add("-c");
        start.ArgumentList.Add(config);
        return Start("nats-server", start, mqtt, nats, directory);
    }

    /// <summary>
    /// Our host (<paramref name="hostDll"/>) or nats-server (<paramref name="natsServerPath"/>, when the host is null)
    /// on the nats-server configuration file <paramref name="config"/> writes for free ports: the storm runs both
    /// servers on the same text, so they differ only in what they do with it.
    /// </summary>
    public static MqttServer StartOnConfig(string name, string? hostDll, string? natsServerPath, Func<ConfigPorts, string> config)
    {
        ArgumentNullException.ThrowIfNull(config);
        var ports = new ConfigPorts(FreePort(), FreePort(), FreePort(), FreePort(), Directory.CreateTempSubdirectory($"{name}-").FullName);
        var file = Path.Combine(ports.Directory, "server.conf");
        File.WriteAllText(file, config(ports));
        var start = hostDll is not null
            ? new ProcessStartInfo("dotnet") { ArgumentList = { hostDll, "-c", file } }
            : new ProcessStartInfo(natsServerPath ?? throw new ArgumentNullException(nameof(natsServerPath))) { ArgumentList = { "-c", file } };
        start.UseShellExecute = false;
        start.RedirectStandardOutput = true;
        start.RedirectStandardError = true;
        return Start(name, start, ports.Mqtt, ports.Nats, ports.Directory, ports);
    }

    public static MqttServer StartMosquitto(string mosquittoPath)
    {
        var mqtt = FreePort();
        var directory = Directory.CreateTempSubdirectory("mqtt-mosquitto-").FullName;
        var config = Path.Combine(directory, "mosquitto.conf");
        File.WriteAllText(config, $"listener {mqtt} 127.0.0.1\nallow_anonymous true\nmax_connections -1\n");
        var start = new ProcessStartInfo(mosquittoPath) { UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardError = true };
        start.ArgumentList.Add("-c");
        start.ArgumentList.Add(config);
        return Start("mosquitto", start, mqtt, null, directory);
    }

    public void Dispose()
    {
        try
        {
            if (!process.HasExited)
            {
                process.Kill(entireProcessTree: true);
                process.WaitForExit(5000);
            }
        }
        catch (InvalidOperationException)
        {
        }

        ChildProcesses.Unregister(process);
        process.Dispose();
        try
        {
            Directory.Delete(directory, recursive: true);
        }
        catch (IOException)
        {
        }
    }

    private static MqttServer Start(string name, ProcessStartInfo start, int mqttPort, int? natsPort, string directory, ConfigPorts? configured = null)
    {
        var process = Process.Start(start) ?? throw new InvalidOperationException($"cannot start {start.FileName}");
        ChildProcesses.Register(process);
        var server0 = (MqttServer?)null;
        process.OutputDataReceived += (_, e) => server0?.Keep(e.Data);
        process.ErrorDataReceived += (_, e) => server0?.Keep(e.Data);
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        var server = new MqttServer(name, process, new IPEndPoint(IPAddress.Loopback, mqttPort), natsPort is { } n ? new IPEndPoint(IPAddress.Loopback, n) : null, directory)
        {
            WebSocket = configured is null ? null : new IPEndPoint(IPAddress.Loopback, configured.WebSocket),
            Monitor = configured is null ? null : new IPEndPoint(IPAddress.Loopback, configured.Monitor),
        };
        server0 = server;
        var deadline = Stopwatch.StartNew();
        while (!Accepts(mqttPort) || (configured is not null && !(Accepts(configured.Nats) && Accepts(configured.WebSocket) && Accepts(configured.Monitor))))
        {
            if (process.HasExited || deadline.Elapsed > StartTimeout)
            {
                server.Dispose();
                throw new InvalidOperationException($"{name} did not open its MQTT port {mqttPort}");
            }

            Thread.Sleep(50);
        }

        return server;
    }

    private static bool Accepts(int port)
    {
        try
        {
            using var socket = new Socket(SocketType.Stream, ProtocolType.Tcp);
            socket.Connect(IPAddress.Loopback, port);
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
    }

    // Ports handed out by this process: the kernel may give a just-closed port 0 listener's number again, and one server
    // launched with the same port for NATS and MQTT answers an MQTT CONNECT with INFO.
    private static readonly HashSet<int> Given = [];

    private static int FreePort()
    {
        while (true)
        {
            using var listener = new TcpListener(IPAddress.Loopback, 0);
            listener.Start();
            var port = ((IPEndPoint)listener.LocalEndpoint).Port;
            lock (Given)
            {
                if (Given.Add(port))
                {
                    return port;
                }
            }
        }
    }
}
