import type { PolicyPackCreate } from '../policy-packs/policy-packs.schemas.js'
import type { QuestionnaireCreate } from '../questionnaires/questionnaires.schemas.js'
import type { VersionContent } from '../policy-controls/policy-controls.service.js'

/**
 * The starter policy library loaded into new tenants: a summary in this project's own words of widely
 * used public frameworks. It is a starting point for a governance team, not legal advice; article and
 * clause references point readers to the source texts.
 */

export interface StarterRiskType {
  name: string
  description: string
}

export interface StarterRiskScenario {
  name: string
  description: string
  risk_types: string[]
  domains: string[]
  industries: string[]
}

export interface StarterControl {
  key: string
  name: string
  description: string
  evidence_requirements: VersionContent['evidence_requirements']
  /** Names of starter risk types. */
  risk_types: string[]
}

export const RISK_TYPES: StarterRiskType[] = [
  {
    name: 'Bias and discrimination',
    description:
      'Outputs that treat people or groups unfairly, including through proxies for protected characteristics.',
  },
  {
    name: 'Privacy and data protection',
    description: 'Unlawful, excessive or insecure processing of personal data, or disclosure of it through the system.',
  },
  {
    name: 'Safety',
    description: "Physical, psychological or financial harm to people caused by the system's outputs or actions.",
  },
  {
    name: 'Security',
    description:
      'Attacks on the system or its data: poisoning, evasion, prompt injection, model theft, data exfiltration.',
  },
  {
    name: 'Transparency and explainability',
    description:
      'People cannot tell that AI is involved, or cannot understand how an output that affects them was reached.',
  },
  {
    name: 'Human oversight and accountability',
    description: 'No one is clearly responsible, or people cannot effectively monitor, override or stop the system.',
  },
  {
    name: 'Accuracy and robustness',
    description:
      'Errors, degraded performance under drift or unusual inputs, and unreliable results presented with confidence.',
  },
  {
    name: 'Intellectual property',
    description: 'Training on or generating content that infringes copyright, trade secrets or licence terms.',
  },
  {
    name: 'Harmful or misleading content',
    description: 'Generated content that is false, defamatory, manipulative or otherwise harmful.',
  },
]

export const RISK_SCENARIOS: StarterRiskScenario[] = [
  {
    name: 'Discriminatory automated decisions',
    description: 'A credit, hiring or eligibility model systematically disadvantages a protected group.',
    risk_types: ['Bias and discrimination', 'Transparency and explainability'],
    domains: ['decision_making'],
    industries: ['financial_services', 'employment', 'public_sector'],
  },
  {
    name: 'Personal data exposed in model outputs',
    description: 'A model memorises training data and reveals personal information in its responses.',
    risk_types: ['Privacy and data protection', 'Security'],
    domains: ['generative_ai'],
    industries: [],
  },
  {
    name: 'Prompt injection in an LLM application',
    description:
      'Instructions hidden in user input or retrieved content make the application leak data or take unintended actions.',
    risk_types: ['Security', 'Safety'],
    domains: ['generative_ai'],
    industries: [],
  },
  {
    name: 'Fabricated content presented as fact',
    description: 'A generative system produces plausible but false statements that users rely on.',
    risk_types: ['Harmful or misleading content', 'Accuracy and robustness'],
    domains: ['generative_ai'],
    industries: [],
  },
  {
    name: 'Performance loss from data drift',
    description:
      'Real-world data moves away from the training distribution and accuracy falls without anyone noticing.',
    risk_types: ['Accuracy and robustness'],
    domains: ['machine_learning'],
    industries: [],
  },
  {
    name: 'Automation bias in human review',
    description:
      "Reviewers approve the system's recommendations without real scrutiny, so oversight exists only on paper.",
    risk_types: ['Human oversight and accountability'],
    domains: ['decision_making'],
    industries: [],
  },
  {
    name: 'Training data without a lawful basis or licence',
    description:
      'Data used to train or fine-tune a model was collected without consent, legal basis or the right licence.',
    risk_types: ['Privacy and data protection', 'Intellectual property'],
    domains: ['machine_learning', 'generative_ai'],
    industries: [],
  },
  {
    name: 'Unsafe actions by an autonomous agent',
    description: 'An agent with tool access performs an irreversible or harmful action no one approved.',
    risk_types: ['Safety', 'Human oversight and accountability'],
    domains: ['agents'],
    industries: [],
  },
]

const file = (description: string, required = true) => ({ type: 'file' as const, description, required })
const text = (description: string, required = true) => ({ type: 'text' as const, description, required })
const link = (description: string, required = true) => ({ type: 'link' as const, description, required })
const metric = (description: string, required = true) => ({ type: 'metric' as const, description, required })

export const CONTROLS: StarterControl[] = [
  // EU AI Act (Regulation (EU) 2024/1689): requirements for high-risk AI systems.
  {
    key: 'EUAIA-ART9',
    name: 'Risk management system (EU AI Act Art. 9)',
    description:
      'Run a documented risk management process across the whole life cycle: identify and analyse known and reasonably foreseeable risks to health, safety and fundamental rights, including under foreseeable misuse; evaluate them with post-market data; adopt targeted mitigations and test that residual risk is acceptable.',
    evidence_requirements: [
      file('Risk management plan and procedure'),
      file('Risk register with mitigations and residual risk'),
      link('Test results supporting the chosen measures', false),
    ],
    risk_types: ['Safety', 'Bias and discrimination', 'Human oversight and accountability'],
  },
  {
    key: 'EUAIA-ART10',
    name: 'Data and data governance (EU AI Act Art. 10)',
    description:
      'Govern training, validation and test data: document design choices, collection, origin and preparation; check the data is relevant, sufficiently representative and as complete and error-free as possible; examine it for biases and act on what is found.',
    evidence_requirements: [
      file('Data sheet for each data set (origin, purpose, preparation)'),
      file('Bias examination and its outcome'),
      metric('Data quality measures', false),
    ],
    risk_types: ['Bias and discrimination', 'Privacy and data protection', 'Accuracy and robustness'],
  },
  {
    key: 'EUAIA-ART11',
    name: 'Technical documentation (EU AI Act Art. 11)',
    description:
      'Draw up the technical documentation before the system is placed on the market or put into service, covering the elements of Annex IV, and keep it up to date.',
    evidence_requirements: [
      file('Technical documentation following Annex IV'),
      text('Date of last review and who approved it'),
    ],
    risk_types: ['Transparency and explainability'],
  },
  {
    key: 'EUAIA-ART12',
    name: 'Record-keeping and logging (EU AI Act Art. 12)',
    description:
      'Make the system record events automatically over its lifetime so that its functioning can be traced: situations that may present risk, substantial modifications and post-market monitoring.',
    evidence_requirements: [text('What is logged, where, and for how long'), link('Sample of the event logs', false)],
    risk_types: ['Human oversight and accountability', 'Transparency and explainability'],
  },
  {
    key: 'EUAIA-ART13',
    name: 'Transparency and instructions for use (EU AI Act Art. 13)',
    description:
      'Design the system so deployers can interpret its output and use it appropriately, and give them instructions for use stating its purpose, accuracy, known limitations, foreseeable risks, human oversight measures and maintenance needs.',
    evidence_requirements: [
      file('Instructions for use given to deployers'),
      text('Known limitations and conditions of use'),
    ],
    risk_types: ['Transparency and explainability'],
  },
  {
    key: 'EUAIA-ART14',
    name: 'Human oversight (EU AI Act Art. 14)',
    description:
      "Design for effective oversight by natural persons: overseers understand the system's capabilities and limits, stay aware of automation bias, can interpret outputs, can decide not to use or to override an output, and can interrupt the system safely.",
    evidence_requirements: [
      file('Human oversight procedure naming the responsible roles'),
      text('How an overseer overrides or stops the system'),
      file('Overseer training records', false),
    ],
    risk_types: ['Human oversight and accountability', 'Safety'],
  },
  {
    key: 'EUAIA-ART15',
    name: 'Accuracy, robustness and cybersecurity (EU AI Act Art. 15)',
    description:
      'Achieve and declare appropriate levels of accuracy; make the system resilient to errors, faults and inconsistencies, including feedback loops; protect it against attacks such as data or model poisoning, adversarial examples and confidentiality attacks.',
    evidence_requirements: [
      metric('Declared accuracy metrics and their values'),
      file('Robustness test report'),
      file('Security assessment covering AI-specific attacks'),
    ],
    risk_types: ['Accuracy and robustness', 'Security'],
  },
  {
    key: 'EUAIA-ART17',
    name: 'Quality management system (EU AI Act Art. 17)',
    description:
      'Maintain a documented quality management system covering the compliance strategy, design and development controls, testing and validation, data management, risk management, post-market monitoring, incident reporting, record-keeping, resources and accountability.',
    evidence_requirements: [file('Quality management system manual'), link('Procedures index', false)],
    risk_types: ['Human oversight and accountability'],
  },
  {
    key: 'EUAIA-ART72',
    name: 'Post-market monitoring (EU AI Act Art. 72)',
    description:
      "Collect and analyse data on the system's performance throughout its lifetime under a post-market monitoring plan, to check continued compliance and feed the risk management process.",
    evidence_requirements: [file('Post-market monitoring plan'), metric('Monitored performance indicators', false)],
    risk_types: ['Accuracy and robustness', 'Safety'],
  },

  // NIST AI Risk Management Framework 1.0: the four core functions.
  {
    key: 'NIST-RMF-GOVERN',
    name: 'Govern (NIST AI RMF)',
    description:
      'Cultivate a risk-aware culture: policies, processes and accountability for AI risk are in place and applied; roles and training are defined; third-party and supply-chain risks are covered; engagement with affected parties is planned.',
    evidence_requirements: [
      file('AI risk policy and accountability structure'),
      text('Who is accountable for this system'),
    ],
    risk_types: ['Human oversight and accountability'],
  },
  {
    key: 'NIST-RMF-MAP',
    name: 'Map (NIST AI RMF)',
    description:
      'Establish the context: intended purpose, users, setting and assumptions; categorise the system; identify benefits, costs and the potential impacts on individuals, groups, organisations and society.',
    evidence_requirements: [
      file('Context and impact mapping for the system'),
      text('Intended purpose and out-of-scope uses'),
    ],
    risk_types: ['Safety', 'Bias and discrimination'],
  },
  {
    key: 'NIST-RMF-MEASURE',
    name: 'Measure (NIST AI RMF)',
    description:
      'Analyse, assess and track the identified risks with suitable methods and metrics, evaluating trustworthiness characteristics: validity and reliability, safety, security and resilience, transparency, explainability, privacy and fairness.',
    evidence_requirements: [
      metric('Evaluation results for the relevant trustworthiness characteristics'),
      file('Test and evaluation plan', false),
    ],
    risk_types: ['Accuracy and robustness', 'Bias and discrimination', 'Security'],
  },
  {
    key: 'NIST-RMF-MANAGE',
    name: 'Manage (NIST AI RMF)',
    description:
      'Prioritise and treat risks based on the assessments; plan responses, recovery and communication for incidents; monitor deployed systems and decommission them safely when needed.',
    evidence_requirements: [file('Risk treatment plan'), file('Incident response and communication plan')],
    risk_types: ['Safety', 'Human oversight and accountability'],
  },

  // ISO/IEC 42001:2023: AI management system themes.
  {
    key: 'ISO42001-POLICY',
    name: 'AI policy and objectives (ISO/IEC 42001 cl. 5.2, 6.2)',
    description:
      "Top management sets an AI policy suited to the organisation's purpose and measurable AI objectives, and communicates them.",
    evidence_requirements: [file('Approved AI policy'), text('AI objectives relevant to this system')],
    risk_types: ['Human oversight and accountability'],
  },
  {
    key: 'ISO42001-ROLES',
    name: 'Roles, responsibilities and authorities (ISO/IEC 42001 cl. 5.3)',
    description:
      'Responsibilities and authorities for the AI management system and for each AI system are assigned and communicated.',
    evidence_requirements: [text('Owner and responsible roles for this system')],
    risk_types: ['Human oversight and accountability'],
  },
  {
    key: 'ISO42001-RISK',
    name: 'AI risk assessment and treatment (ISO/IEC 42001 cl. 6.1, 8.2, 8.3)',
    description:
      'Assess AI risks against defined criteria, choose treatments and the controls that implement them, and repeat at planned intervals or after significant change.',
    evidence_requirements: [
      file('AI risk assessment'),
      file('Risk treatment plan and statement of applicability', false),
    ],
    risk_types: ['Safety', 'Security', 'Bias and discrimination'],
  },
  {
    key: 'ISO42001-IMPACT',
    name: 'AI system impact assessment (ISO/IEC 42001 cl. 6.1.4, 8.4)',
    description:
      'Assess the potential consequences of the system for individuals, groups and society across its intended use and foreseeable misuse, and record the results.',
    evidence_requirements: [file('Impact assessment for this system')],
    risk_types: ['Bias and discrimination', 'Privacy and data protection', 'Safety'],
  },
  {
    key: 'ISO42001-LIFECYCLE',
    name: 'AI system life cycle (ISO/IEC 42001 Annex A.6)',
    description:
      'Define and follow processes for responsible design, development, verification, deployment, operation and monitoring of the system, with documented requirements and release criteria.',
    evidence_requirements: [file('Life-cycle records: requirements, verification and release approval')],
    risk_types: ['Accuracy and robustness'],
  },
  {
    key: 'ISO42001-DATA',
    name: 'Data for AI systems (ISO/IEC 42001 Annex A.7)',
    description:
      'Manage the data used by the system: acquisition, provenance, quality, preparation and its suitability for the intended use.',
    evidence_requirements: [file('Data provenance and quality records')],
    risk_types: ['Privacy and data protection', 'Intellectual property', 'Accuracy and robustness'],
  },
  {
    key: 'ISO42001-THIRD-PARTY',
    name: 'Third-party and customer relationships (ISO/IEC 42001 Annex A.10)',
    description:
      "Allocate responsibilities with suppliers, partners and customers, and make sure supplied AI components and services meet the organisation's requirements.",
    evidence_requirements: [
      file('Supplier assessment or contract clauses'),
      text('Which components come from third parties', false),
    ],
    risk_types: ['Security', 'Intellectual property'],
  },
  {
    key: 'ISO42001-PERFORMANCE',
    name: 'Monitoring, internal audit and improvement (ISO/IEC 42001 cl. 9, 10)',
    description:
      'Monitor and measure the AI management system and its systems, audit them internally, review them at management level, and correct nonconformities.',
    evidence_requirements: [file('Latest internal audit or management review'), text('Open corrective actions', false)],
    risk_types: ['Human oversight and accountability'],
  },
]

export const PACKS: PolicyPackCreate[] = [
  {
    key: 'EU-AI-ACT-HIGH-RISK',
    name: 'EU AI Act: high-risk AI systems',
    description:
      'The provider obligations of the EU AI Act for high-risk AI systems: risk management, data governance, documentation, logging, transparency, human oversight, accuracy and security, quality management and post-market monitoring.',
    controls: [
      'EUAIA-ART9',
      'EUAIA-ART10',
      'EUAIA-ART11',
      'EUAIA-ART12',
      'EUAIA-ART13',
      'EUAIA-ART14',
      'EUAIA-ART15',
      'EUAIA-ART17',
      'EUAIA-ART72',
    ].map((key) => ({ key })),
  },
  {
    key: 'NIST-AI-RMF',
    name: 'NIST AI Risk Management Framework 1.0',
    description: 'The four core functions of the NIST AI RMF: Govern, Map, Measure and Manage.',
    controls: ['NIST-RMF-GOVERN', 'NIST-RMF-MAP', 'NIST-RMF-MEASURE', 'NIST-RMF-MANAGE'].map((key) => ({ key })),
  },
  {
    key: 'ISO-IEC-42001',
    name: 'ISO/IEC 42001 AI management system',
    description: 'Core themes of an ISO/IEC 42001 AI management system applied to one AI system.',
    controls: [
      'ISO42001-POLICY',
      'ISO42001-ROLES',
      'ISO42001-RISK',
      'ISO42001-IMPACT',
      'ISO42001-LIFECYCLE',
      'ISO42001-DATA',
      'ISO42001-THIRD-PARTY',
      'ISO42001-PERFORMANCE',
    ].map((key) => ({ key })),
  },
]

export const QUESTIONNAIRES: QuestionnaireCreate[] = [
  {
    key: 'AI-USE-CASE-INTAKE',
    name: 'AI use case intake',
    target: 'use_case',
    description: 'First questions for a new AI use case: enough to decide its risk level and which policy packs apply.',
    sections: [
      {
        id: 'purpose',
        title: 'Purpose and context',
        questions: [
          {
            id: 'business_purpose',
            question: 'What problem does the system solve, and for whom?',
            evidence_type: 'text',
            required: true,
          },
          {
            id: 'decision_role',
            question: 'What role does the system play in decisions?',
            evidence_type: 'select',
            select_options: [
              'Informs a person who decides',
              'Decides, with a person reviewing',
              'Decides or acts without review',
            ],
            required: true,
          },
          {
            id: 'affected_people',
            question: 'Who is affected by its outputs?',
            evidence_type: 'select',
            multiple: true,
            select_options: ['Customers', 'Employees', 'Job applicants', 'Patients', 'Students', 'The public'],
            required: true,
          },
          {
            id: 'regions',
            question: 'Where will it be used?',
            evidence_type: 'select',
            multiple: true,
            select_options: ['EU/EEA', 'United Kingdom', 'United States', 'Other'],
            required: true,
          },
        ],
      },
      {
        id: 'data',
        title: 'Data',
        questions: [
          { id: 'personal_data', question: 'Does it process personal data?', evidence_type: 'boolean', required: true },
          {
            id: 'special_category_data',
            question: 'Does it process special categories of data (health, biometrics, ethnicity, beliefs, …)?',
            evidence_type: 'boolean',
            required: true,
          },
          {
            id: 'data_sources',
            question: 'Which data sources does it use for training and at run time?',
            evidence_type: 'text',
          },
        ],
      },
      {
        id: 'technology',
        title: 'Model and suppliers',
        questions: [
          {
            id: 'model_kind',
            question: 'What kind of model does it use?',
            evidence_type: 'select',
            select_options: [
              'Classical machine learning',
              'Generative AI / large language model',
              'Rules only',
              'Other',
            ],
            required: true,
          },
          {
            id: 'third_party',
            question: 'Does it rely on a third-party model or AI service?',
            evidence_type: 'boolean',
            required: true,
          },
          { id: 'vendors', question: 'Which vendors or models?', evidence_type: 'text' },
        ],
      },
      {
        id: 'risk_screening',
        title: 'Risk screening',
        questions: [
          {
            id: 'eu_high_risk_area',
            question: 'Is it used in an area the EU AI Act lists as high-risk (Annex III)?',
            evidence_type: 'select',
            multiple: true,
            select_options: [
              'Biometrics',
              'Critical infrastructure',
              'Education and training',
              'Employment and worker management',
              'Access to essential services (e.g. credit, insurance, benefits)',
              'Law enforcement',
              'Migration and border control',
              'Justice and democratic processes',
              'None of these',
            ],
            required: true,
          },
          {
            id: 'interacts_with_people',
            question: 'Do people interact with it directly or see content it generates?',
            evidence_type: 'boolean',
            required: true,
          },
          {
            id: 'human_oversight',
            question: 'How can a person check, override or stop its outputs?',
            evidence_type: 'text',
            required: true,
          },
          {
            id: 'existing_documents',
            question: 'Attach any existing design, risk or model documentation.',
            evidence_type: 'file',
            multiple: true,
          },
        ],
      },
    ],
  },
]
