using Broker.Compare;

namespace Broker.Bench.Tests.Compare;

/// <summary>
/// The MQTT rows run the host named by <c>--host-dll</c>, as the other rows do: until d82d3b5, <c>mqtt</c> ignored the
/// flag and always ran this repository's build, so rows meant to alternate two builds measured one (issue 25).
/// </summary>
public sealed class MqttHostChoiceTests
{
    [Fact(Timeout = 30_000)]
    public async Task The_mqtt_rows_start_the_host_given_by_host_dll()
    {
        var missing = Path.Combine(Path.GetTempPath(), "no-such-host-" + Guid.NewGuid().ToString("N"), "Broker.Host.dll");

        var error = await Assert.ThrowsAsync<InvalidOperationException>(() => Program.Main(["mqtt", "--smoke", "--rows", "MQTT sessions", "--host-dll", missing]));

        Assert.Contains(missing, error.Message, StringComparison.Ordinal);
    }
}
