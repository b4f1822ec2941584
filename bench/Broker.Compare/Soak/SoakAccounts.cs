using System.Globalization;
using Broker.Compare.Mqtt;

namespace Broker.Compare.Soak;

/// <summary>
/// The two-account soak (<c>soak --accounts</c>, issue 20): both servers run one configuration with account E, which
/// exports <c>soak.&gt;</c> as a stream and holds every anonymous client (<c>no_auth_user</c>: the publisher, the MQTT
/// sessions, half the NATS clients), and account I, which imports it with the prefix <c>imp.</c>. Every second steady
/// NATS subscriber and every second churned NATS connection log in to I and subscribe to the prefixed subject, so the
/// steady traffic crosses the import and each churned connect and close adds and removes an import subscription in E.
/// </summary>
internal static class SoakAccounts
{
    /// <summary>The importing account's user (its password is the same).</summary>
    public const string ImportingUser = "i";

    /// <summary>What the importing account puts before the exported subjects.</summary>
    public const string Prefix = "imp.";

    /// <summary>The configuration both servers run, on the ports <see cref="MqttServer.StartOnConfig"/> chose.</summary>
    public static string Config(MqttServer.ConfigPorts ports)
    {
        ArgumentNullException.ThrowIfNull(ports);
        return string.Create(CultureInfo.InvariantCulture, $$"""
            listen: 127.0.0.1:{{ports.Nats}}
            http: 127.0.0.1:{{ports.Monitor}}
            server_name: soak
            jetstream { store_dir: "{{Path.Combine(ports.Directory, "js")}}" }
            mqtt { listen: "127.0.0.1:{{ports.Mqtt}}" }
            websocket { listen: "127.0.0.1:{{ports.WebSocket}}", no_tls: true }
            accounts {
              E: { jetstream: enabled, users: [ { user: e, password: e } ], exports: [ { stream: "soak.>" } ] }
              I: { users: [ { user: {{ImportingUser}}, password: {{ImportingUser}} } ], imports: [ { stream: { account: E, subject: "soak.>" }, prefix: imp } ] }
            }
            no_auth_user: e
            """);
    }
}
