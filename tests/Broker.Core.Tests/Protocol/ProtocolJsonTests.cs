using System.Text;
using System.Text.Json;
using System.Text.Json.Serialization;
using Broker.Core.Internal.Protocol;

namespace Broker.Core.Tests.Protocol;

/// <summary>
/// CONNECT is read with <see cref="Utf8JsonReader"/> and INFO written with <see cref="Utf8JsonWriter"/> (issue 24: the
/// serializer context's metadata cost about 100 JIT compilations at every process's first connection). Both are
/// checked against the source-generated serializer they replaced, kept here as the oracle, input by input.
/// </summary>
public sealed class ProtocolJsonTests
{
    public static TheoryData<string> Connects =>
    [
        "{}",
        """{"verbose":false,"pedantic":false,"echo":true,"tls_required":false,"headers":true,"no_responders":true,"protocol":1}""",
        """{"user":"a","pass":"b\"c","auth_token":"t","nkey":"UA","sig":"s","jwt":"j","name":"n\u00e9","lang":"go","version":"1.2","account":"A","new_account":true}""",
        """{"VERBOSE":false,"User":"x","No_Responders":true}""",
        """{"verbose":null,"user":null,"protocol":null}""",
        """{"unknown":{"a":[1,2,{"b":null}]},"other":[true],"verbose":false}""",
        """{"verbose":true,"verbose":false}""",
        """  {"protocol":1}  """,
        """{"verbose":"yes"}""",
        """{"verbose":1}""",
        """{"user":1}""",
        """{"user":true}""",
        """{"protocol":1.5}""",
        """{"protocol":"1"}""",
        """{"protocol":99999999999}""",
        """{"verbose":false} x""",
        """{"verbose":false}{}""",
        """{"verbose":false,}""",
        """{"verbose":false /* c */}""",
        """{"verbose":false""",
        "[]",
        "null",
        "1",
        "\"s\"",
        "",
        "{\"user\":\"\\u0041\"}",
    ];

    [Theory]
    [MemberData(nameof(Connects))]
    public void Connect_reads_as_the_serializer_did(string json)
    {
        var bytes = Encoding.UTF8.GetBytes(json);
        ConnectMessage? expected;
        try
        {
            expected = JsonSerializer.Deserialize(bytes, OracleJsonContext.Default.ConnectMessage);
        }
        catch (JsonException)
        {
            expected = null;
        }

        var actual = ConnectMessage.TryParse(bytes);

        Assert.Equal(expected is null, actual is null);
        if (expected is not null)
        {
            Assert.Equal(JsonSerializer.Serialize(expected, OracleJsonContext.Default.ConnectMessage), JsonSerializer.Serialize(actual!, OracleJsonContext.Default.ConnectMessage));
        }
    }

    [Fact]
    public void Info_writes_what_the_serializer_wrote()
    {
        var minimal = new ServerInfo { ServerId = "NID", ServerName = "n", Go = "go1.19", Host = "0.0.0.0", Port = 4222, MaxPayload = 1 << 20, ClientId = ulong.MaxValue };
        var full = new ServerInfo
        {
            ServerId = "NID",
            ServerName = "<name> & 'quote' \"é\" +",
            Go = "go1.19",
            Host = "::1",
            Port = 4222,
            Headers = true,
            AuthRequired = true,
            TlsRequired = false,
            TlsVerify = true,
            TlsAvailable = true,
            MaxPayload = 1 << 20,
            JetStream = true,
            ClientId = 7,
            ClientIp = "127.0.0.1",
            Nonce = "abc",
            Cluster = "C1",
            Domain = "edge",
            ConnectUrls = ["127.0.0.1:4222", "[::1]:4223"],
            LameDuckMode = true,
            XKey = "XKEY",
            BrokerVersion = "0.1.0",
        };

        // The full INFO sets every property, so a property the writer leaves out fails here.
        var written = JsonDocument.Parse(JsonSerializer.Serialize(full, OracleJsonContext.Default.ServerInfo)).RootElement;
        foreach (var property in typeof(ServerInfo).GetProperties())
        {
            if (property.GetCustomAttributes(typeof(JsonPropertyNameAttribute), false) is [JsonPropertyNameAttribute name])
            {
                Assert.True(written.TryGetProperty(name.Name, out _), $"the full INFO leaves {name.Name} unset");
            }
        }

        foreach (var info in new[] { minimal, full })
        {
            var expected = "INFO " + JsonSerializer.Serialize(info, OracleJsonContext.Default.ServerInfo) + "\r\n";
            Assert.Equal(expected, Encoding.UTF8.GetString(info.ToProtocolLine()));
        }
    }
}

/// <summary>The serializer context the broker used for CONNECT and INFO before issue 24, as the oracle.</summary>
[JsonSourceGenerationOptions(PropertyNameCaseInsensitive = true, DefaultIgnoreCondition = JsonIgnoreCondition.WhenWritingNull)]
[JsonSerializable(typeof(ConnectMessage))]
[JsonSerializable(typeof(ServerInfo))]
internal sealed partial class OracleJsonContext : JsonSerializerContext;
