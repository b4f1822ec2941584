using System.Net;
using Broker.Abstractions;
using Broker.Core;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Logging;

namespace Broker.TestKit;

/// <summary>
/// A broker started in-process on 127.0.0.1 with a free port, for one test. Disposing it stops the broker and
/// fails the test if the broker logged an error the test did not declare with <see cref="ExpectErrors"/>.
/// </summary>
public sealed class TestBroker : IAsyncDisposable
{
    private readonly ILoggerFactory loggerFactory;
    private bool errorsExpected;

    private TestBroker(BrokerServer server, TestLogSink logs, ILoggerFactory loggerFactory)
    {
        Server = server;
        Logs = logs;
        this.loggerFactory = loggerFactory;
    }

    public BrokerServer Server { get; }

    public TestLogSink Logs { get; }

    public IPEndPoint EndPoint => Server.ClientEndPoint;

    public int Port => EndPoint.Port;

    public string Url => Server.ClientUrl;

    public IMessageBus Bus => Server.Bus;

    /// <summary>Starts a broker; <paramref name="configure"/> adjusts the options (host and port are preset).</summary>
    public static async Task<TestBroker> StartAsync(
        Action<BrokerOptions>? configure = null,
        IEnumerable<IBrokerPlugin>? plugins = null,
        IConfiguration? configuration = null,
        Action<string>? echoLogs = null)
    {
        var options = new BrokerOptions { Host = "127.0.0.1", Port = 0 };
        configure?.Invoke(options);
        var logs = new TestLogSink(echoLogs);
        var loggerFactory = LoggerFactory.Create(builder => builder.SetMinimumLevel(LogLevel.Debug).AddProvider(logs));
        var server = new BrokerServer(options, loggerFactory, configuration);
        foreach (var plugin in plugins ?? [])
        {
            server.AddPlugin(plugin);
        }

        await server.StartAsync().ConfigureAwait(false);
        return new TestBroker(server, logs, loggerFactory);
    }

    /// <summary>Declares that this test makes the broker log errors on purpose.</summary>
    public void ExpectErrors() => errorsExpected = true;

    public async ValueTask DisposeAsync()
    {
        await Server.DisposeAsync().ConfigureAwait(false);
        loggerFactory.Dispose();
        var errors = Logs.Errors.ToList();
        if (!errorsExpected && errors.Count > 0)
        {
            throw new Xunit.Sdk.XunitException("The broker logged errors:" + Environment.NewLine + string.Join(Environment.NewLine, errors));
        }
    }
}
