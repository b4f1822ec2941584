using Broker.Fuzz.Targets;

namespace Broker.Fuzz.Support;

/// <summary>Every fuzz target, by name.</summary>
internal static class FuzzTargets
{
    public static IReadOnlyList<IFuzzTarget> All { get; } =
    [
        new NatsProtocolTarget(),
        new MqttPacketTarget(),
        new WebSocketFrameTarget(),
        new WebSocketUpgradeTarget(),
        new MonitoringHttpTarget(),
        new ConfTarget(),
        new JetStreamApiTarget(),
    ];

    public static IFuzzTarget? Find(string name) => All.FirstOrDefault(t => string.Equals(t.Name, name, StringComparison.Ordinal));
}
